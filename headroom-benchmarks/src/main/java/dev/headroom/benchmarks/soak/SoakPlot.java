package dev.headroom.benchmarks.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Draws a long run's samples as one PNG of stacked charts, and tells whether each quantity stayed
 * flat.
 *
 * <p>Input: the CSV {@code load/gateway-soak.sh} (or {@code gateway-overload.sh}) writes, one row per
 * ten-second sample, with a header naming the columns: {@code seconds} first, then the sampled
 * quantities ({@code rss_mb}, {@code heap_after_gc_mb}, {@code fds}, {@code threads}, {@code p99_ms},
 * {@code rps}, ...) and an {@code event} column (what the script did in that sample: a reload,
 * the upstream stopped, Redis restarted), drawn as a marker on every chart.
 *
 * <p>Flat means: the median of the last fifth of the samples is at most {@link #TOLERANCE} times
 * the median of the second fifth (the first fifth is warm-up: the JIT, the heap growing to its
 * working size, the key map filling to {@code store.maxKeys}). A quantity that grows without
 * bound in a leak grows by more than that over a run of this length; one that settles does not.
 *
 * <p>Usage: {@code java -cp headroom-benchmarks/target/benchmarks.jar
 * dev.headroom.benchmarks.soak.SoakPlot samples.csv out.png "title" [column ...]}; the columns
 * default to rss_mb, heap_after_gc_mb, fds, threads and p99_ms. Exit status 3 when a column is
 * not flat.
 */
public final class SoakPlot {

  /** How much the late median may exceed the early one and still count as flat. */
  static final double TOLERANCE = 1.25;

  private SoakPlot() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: SoakPlot samples.csv out.png title [column ...]");
      System.exit(2);
    }
    List<String> lines = Files.readAllLines(Path.of(args[0]));
    if (lines.size() < 6) {
      throw new IllegalArgumentException(args[0] + ": " + (lines.size() - 1)
          + " samples; expected at least 5 rows after the header");
    }
    List<String> header = Arrays.asList(lines.get(0).split(","));
    List<String> columns = args.length > 3 ? Arrays.asList(args).subList(3, args.length)
        : List.of("rss_mb", "heap_after_gc_mb", "fds", "threads", "p99_ms");
    int event = header.indexOf("event");
    List<String[]> rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      rows.add(line.split(",", -1));
    }
    double[] minutes = rows.stream().mapToDouble(r -> Double.parseDouble(r[0]) / 60).toArray();
    List<XYChart> charts = new ArrayList<>();
    boolean allFlat = true;
    for (String column : columns) {
      int c = header.indexOf(column);
      if (c < 0) {
        throw new IllegalArgumentException("column '" + column + "' is not in " + args[0] + "; expected one of " + header);
      }
      double[] y = rows.stream().mapToDouble(r -> r[c].isEmpty() ? Double.NaN : Double.parseDouble(r[c])).toArray();
      double early = median(y, y.length / 5, 2 * y.length / 5);
      double late = median(y, 4 * y.length / 5, y.length);
      boolean flat = !(late > early * TOLERANCE);
      allFlat &= flat;
      System.out.printf(Locale.ROOT, "%-18s early %10.1f  late %10.1f  late/early %5.2f  %s%n",
          column, early, late, late / early, flat ? "flat" : "GROWS");
      XYChart chart = new XYChartBuilder().width(1000).height(220)
          .title(args[2] + ": " + column + String.format(Locale.ROOT, " (late/early %.2f)", late / early))
          .xAxisTitle("minutes").yAxisTitle(column).build();
      chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
      chart.getStyler().setLegendVisible(false).setMarkerSize(3);
      chart.getStyler().setYAxisMin(0.0);
      chart.getStyler().setXAxisDecimalPattern("0");
      chart.addSeries(column, minutes, replaceNaN(y)).setMarker(SeriesMarkers.NONE);
      if (event >= 0) {
        List<Double> ex = new ArrayList<>();
        List<Double> ey = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
          if (event < rows.get(i).length && rows.get(i)[event].contains("redis")) {
            ex.add(minutes[i]);
            ey.add(Double.isNaN(y[i]) ? 0 : y[i]);
          }
        }
        if (!ex.isEmpty()) {
          XYSeries restarts = chart.addSeries("redis restarted", ex, ey);
          restarts.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
          restarts.setMarker(SeriesMarkers.DIAMOND);
          restarts.setMarkerColor(java.awt.Color.RED);
          chart.getStyler().setMarkerSize(9);
          chart.getStyler().setLegendVisible(true).setLegendPosition(Styler.LegendPosition.InsideNW);
        }
      }
      charts.add(chart);
    }
    BitmapEncoder.saveBitmap(charts, charts.size(), 1, args[1], BitmapEncoder.BitmapFormat.PNG);
    if (!allFlat) {
      System.exit(3);
    }
  }

  static double median(double[] y, int from, int to) {
    double[] part = Arrays.stream(y, from, Math.max(from + 1, to)).filter(v -> !Double.isNaN(v)).sorted().toArray();
    return part.length == 0 ? Double.NaN : part[part.length / 2];
  }

  private static double[] replaceNaN(double[] y) {
    double[] out = y.clone();
    for (int i = 0; i < out.length; i++) {
      if (Double.isNaN(out[i])) {
        out[i] = i > 0 ? out[i - 1] : 0;
      }
    }
    return out;
  }
}
