package dev.headroom.cli;

import dev.headroom.gateway.GatewayConfig;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Reads a size bound of the command line: a number of bytes, or of KiB or MiB ({@code 1048576},
 * {@code 512KiB}, {@code 2MiB}), from 1 byte to {@link GatewayConfig#MAX_BYTES_CEILING}.
 */
final class ByteSize implements CommandLine.ITypeConverter<Long> {
  private static final Pattern SIZE = Pattern.compile("(\\d{1,9})\\s*(kib|mib)?", Pattern.CASE_INSENSITIVE);

  @Override
  public Long convert(String value) {
    Matcher m = SIZE.matcher(value.strip());
    long bytes = -1;
    if (m.matches()) {
      String unit = m.group(2) == null ? "" : m.group(2).toLowerCase(Locale.ROOT);
      bytes = Long.parseLong(m.group(1)) << (unit.equals("kib") ? 10 : unit.equals("mib") ? 20 : 0);
    }
    if (bytes < 1 || bytes > GatewayConfig.MAX_BYTES_CEILING) {
      throw new CommandLine.TypeConversionException("\"" + value + "\" is not valid; expected a size from 1 byte to "
          + (GatewayConfig.MAX_BYTES_CEILING >> 20) + "MiB, such as 1048576, 512KiB or 2MiB");
    }
    return bytes;
  }
}
