package dev.sluice.examples;

import java.util.Map;

/** The same WAR file in embedded Tomcat 11: the same answers prove the WAR container-neutral. */
class TomcatWarIT extends WarContract {

    @Override
    Deployed deploy(Map<String, String> contextParams) throws Exception {
        return TomcatWar.deploy(Http.war(), contextParams);
    }
}
