/**
 * Servlet plumbing shared by Sluice's own servlet adapters (the filter, the Spring Boot starter's
 * interceptor): not API, and only those modules may use it (a test in core fails otherwise).
 */
package dev.sluice.servlet.internal;
