package dev.headroom.benchmarks.ramp;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws the capacity ramp's runs ({@code load/capacity-ramp.sh}, {@link LoadRamp}) as one PNG: for
 * the healthy and the halved case side by side, the goodput a second of every set-up against the
 * upstream's capacity and the offered load (top), the p99 latency of each second's admitted
 * answers (middle; 0 for a second without one), and the limit the adaptive set-ups advertised
 * (bottom).
 *
 * <p>Input: a directory holding {@code SETUP-healthy.csv} and {@code SETUP-halved.csv} for each
 * set-up named, as {@link LoadRamp} writes them.
 *
 * <p>Usage: {@code java -cp headroom-benchmarks/target/benchmarks.jar
 * dev.headroom.benchmarks.ramp.RampPlot DIR out.png SETUP ...}.
 */
public final class RampPlot {

  private static final String[] CASES = {"healthy", "halved"};
  /** One colour per set-up, the same in every chart. */
  private static final Color[] COLORS = {new Color(0xd6, 0x27, 0x28), new Color(0x1f, 0x77, 0xb4),
      new Color(0x2c, 0xa0, 0x2c), new Color(0x94, 0x67, 0xbd), new Color(0xff, 0x7f, 0x0e), new Color(0x8c, 0x56, 0x4b),
      new Color(0x17, 0xbe, 0xcf)};

  private RampPlot() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: RampPlot DIR out.png SETUP ...");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    List<String> setups = Arrays.asList(args).subList(2, args.length);
    List<XYChart> charts = new ArrayList<>();
    String[][] rows = {{"ok", "goodput (2xx a second)", "2xx / s"}, {"p99_ms", "admitted p99 (each second's 2xx)", "ms"},
        {"adaptive_limit", "adaptive limit advertised (RateLimit-Policy q)", "requests in flight"}};
    for (String[] row : rows) {
      for (String c : CASES) {
        XYChart chart = new XYChartBuilder().width(800).height(400).title(row[1] + ", " + c + " upstream")
            .xAxisTitle("seconds").yAxisTitle(row[2]).build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW).setMarkerSize(0);
        chart.getStyler().setYAxisMin(0.0);
        for (int k = 0; k < setups.size(); k++) {
          Table t = Table.read(dir.resolve(setups.get(k) + "-" + c + ".csv"));
          if (k == 0 && row[0].equals("ok")) {
            chart.addSeries("capacity", t.column("second"), t.column("capacity")).setMarker(SeriesMarkers.NONE)
                .setLineStyle(SeriesLines.DASH_DASH).setLineColor(Color.BLACK);
            chart.addSeries("offered", t.column("second"), t.column("offered")).setMarker(SeriesMarkers.NONE)
                .setLineStyle(SeriesLines.DOT_DOT).setLineColor(Color.GRAY);
          }
          double[] y = t.column(row[0]);
          if (Arrays.stream(y).allMatch(Double::isNaN)) {
            continue; // no adaptive limit: not an adaptive set-up
          }
          for (int i = 0; i < y.length; i++) {
            y[i] = Double.isNaN(y[i]) ? 0 : y[i]; // no 2xx (or no limit seen) that second: drawn at 0
          }
          chart.addSeries(setups.get(k), t.column("second"), y).setMarker(SeriesMarkers.NONE)
              .setLineColor(COLORS[k % COLORS.length]);
        }
        charts.add(chart);
      }
    }
    BitmapEncoder.saveBitmap(charts, rows.length, 2, args[1], BitmapEncoder.BitmapFormat.PNG);
  }

  /** A CSV with a header; empty cells are NaN. */
  private record Table(List<String> header, List<String[]> rows) {
    static Table read(Path file) throws IOException {
      List<String> lines = Files.readAllLines(file);
      List<String[]> rows = new ArrayList<>();
      for (String line : lines.subList(1, lines.size())) {
        rows.add(line.split(",", -1));
      }
      return new Table(Arrays.asList(lines.get(0).split(",")), rows);
    }

    double[] column(String name) {
      int c = header.indexOf(name);
      if (c < 0) {
        throw new IllegalArgumentException("column '" + name + "' is not in " + header);
      }
      return rows.stream().mapToDouble(r -> r[c].isEmpty() ? Double.NaN : Double.parseDouble(r[c])).toArray();
    }
  }
}
