package dev.headroom.benchmarks.ramp;

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
 * upstream's capacity and the offered load (top), and the p99 latency of each second's admitted
 * answers (bottom).
 *
 * <p>Input: a directory holding {@code SETUP-healthy.csv} and {@code SETUP-halved.csv} for each
 * set-up named, as {@link LoadRamp} writes them.
 *
 * <p>Usage: {@code java -cp headroom-benchmarks/target/benchmarks.jar
 * dev.headroom.benchmarks.ramp.RampPlot DIR out.png SETUP ...}.
 */
public final class RampPlot {

  private static final String[] CASES = {"healthy", "halved"};

  private RampPlot() {}

  public static void main(String[] args) throws IOException {
    if (args.length < 3) {
      System.err.println("usage: RampPlot DIR out.png SETUP ...");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    List<String> setups = Arrays.asList(args).subList(2, args.length);
    List<XYChart> charts = new ArrayList<>();
    for (String column : new String[] {"ok", "p99_ms"}) {
      for (String c : CASES) {
        boolean goodput = column.equals("ok");
        XYChart chart = new XYChartBuilder().width(800).height(420)
            .title((goodput ? "goodput (2xx a second), " : "admitted p99 (ms, each second's 2xx), ") + c + " upstream")
            .xAxisTitle("seconds").yAxisTitle(goodput ? "2xx / s" : "p99 ms").build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW).setMarkerSize(0);
        chart.getStyler().setYAxisMin(0.0);
        if (!goodput) {
          chart.getStyler().setYAxisLogarithmic(true).setYAxisMin(10.0);
        }
        boolean first = true;
        for (String setup : setups) {
          Table t = Table.read(dir.resolve(setup + "-" + c + ".csv"));
          if (first && goodput) {
            chart.addSeries("capacity", t.column("second"), t.column("capacity")).setMarker(SeriesMarkers.NONE)
                .setLineStyle(SeriesLines.DASH_DASH).setLineColor(java.awt.Color.BLACK);
            chart.addSeries("offered", t.column("second"), t.column("offered")).setMarker(SeriesMarkers.NONE)
                .setLineStyle(SeriesLines.DOT_DOT).setLineColor(java.awt.Color.GRAY);
          }
          first = false;
          double[] y = t.column(column);
          if (!goodput) {
            for (int i = 0; i < y.length; i++) {
              y[i] = Double.isNaN(y[i]) ? 10.0 : Math.max(10.0, y[i]); // no 2xx that second: drawn at the floor
            }
          }
          chart.addSeries(setup, t.column("second"), y).setMarker(SeriesMarkers.NONE);
        }
        charts.add(chart);
      }
    }
    BitmapEncoder.saveBitmap(charts, 2, 2, args[1], BitmapEncoder.BitmapFormat.PNG);
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
