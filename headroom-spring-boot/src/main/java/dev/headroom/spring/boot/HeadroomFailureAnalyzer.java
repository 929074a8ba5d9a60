package dev.headroom.spring.boot;

import dev.headroom.enforcement.settings.SettingsProblem;
import java.util.stream.Collectors;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Prints a {@link HeadroomConfigurationException}, every problem of it, as the reason the application did not start. */
class HeadroomFailureAnalyzer extends AbstractFailureAnalyzer<HeadroomConfigurationException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, HeadroomConfigurationException cause) {
    String properties = cause.problems().stream().map(SettingsProblem::path).distinct().collect(Collectors.joining(", "));
    return new FailureAnalysis("Invalid Headroom configuration: " + cause.getMessage(),
        "Correct " + properties + " in the application's configuration (application.yaml or properties).", cause);
  }
}
