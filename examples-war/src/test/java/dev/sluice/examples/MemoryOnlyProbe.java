package dev.sluice.examples;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.io.PrintWriter;

/**
 * Not part of the WAR: {@link MemoryOnlyIT} copies it into {@code WEB-INF/classes} of its copy of
 * the application. Answers, for each class the application must not see, whether the
 * application's class loader (which asks the container's first for anything not its own) can
 * load it: {@code org.redisson.Redisson: absent}, one line each.
 */
public class MemoryOnlyProbe extends HttpServlet {

    private static final long serialVersionUID = 1L;

    /** The classes a memory-only application must not see: Redisson's client, netty's channel. */
    static final String[] FORBIDDEN = {"org.redisson.Redisson", "io.netty.channel.Channel"};

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain;charset=UTF-8");
        PrintWriter out = response.getWriter();
        for (String name : FORBIDDEN) {
            out.println(name + ": " + look(name, MemoryOnlyProbe.class.getClassLoader()));
        }
    }

    private static String look(String name, ClassLoader loader) {
        try {
            Class<?> found = Class.forName(name, false, loader);
            return "present in " + found.getClassLoader();
        } catch (ClassNotFoundException e) {
            return "absent";
        } catch (LinkageError e) {
            // found, but not usable: still on the class path
            return "present but broken: " + e;
        }
    }
}
