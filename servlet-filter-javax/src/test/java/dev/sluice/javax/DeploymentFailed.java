package dev.sluice.javax;

/** The container refused to start the application; the cause is the filter's own exception. */
final class DeploymentFailed extends Exception {

    private static final long serialVersionUID = 1L;

    DeploymentFailed(String message, Throwable cause) {
        super(message, cause);
    }
}
