package dev.sluice.examples;

import java.util.Map;

/** The examples WAR file deployed in embedded Jetty 12 EE11, as the demo runs it. */
class JettyWarIT extends WarContract {

    @Override
    Deployed deploy(Map<String, String> contextParams) throws Exception {
        return JettyWar.deploy(Http.war(), "127.0.0.1", 0, contextParams);
    }
}
