package dev.headroom.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Prints a {@link HeadroomConfigurationException} as the reason the application did not start. */
class HeadroomFailureAnalyzer extends AbstractFailureAnalyzer<HeadroomConfigurationException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, HeadroomConfigurationException cause) {
    return new FailureAnalysis("Invalid Headroom configuration: " + cause.getMessage(),
        "Correct " + cause.property() + " in the application's configuration (application.yaml or properties).", cause);
  }
}
