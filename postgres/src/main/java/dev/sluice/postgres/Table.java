package dev.sluice.postgres;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The SQL of the store, one statement per job, on {@code sluice_rate_state} and
 * {@code sluice_override} ({@code schema.sql}). Stateless; each method runs on the connection given.
 */
final class Table {

    /** The database's clock in microseconds since the epoch. */
    static final String DB_NOW = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint";

    /** The rows of some keys and the database's clock, in one round trip; the clock read once. */
    private static final String READ = "SELECT k.i, s.state, s.version, s.expires_at, c.now"
            + " FROM (SELECT " + DB_NOW + " AS now) c"
            + " CROSS JOIN unnest(?::text[]) WITH ORDINALITY AS k(key, i)"
            + " LEFT JOIN sluice_rate_state s ON s.key = k.key";
    /**
     * {@link #READ} for one key, the usual case: bound as a plain text parameter, it reads in about
     * half the time of the array form (measured on Postgres 15 over loopback).
     */
    private static final String READ_ONE = "SELECT 1, s.state, s.version, s.expires_at, c.now"
            + " FROM (SELECT " + DB_NOW + " AS now) c"
            + " LEFT JOIN sluice_rate_state s ON s.key = ?";
    private static final String UPDATE = "UPDATE sluice_rate_state SET state = ?, version = ?, expires_at = ?"
            + " WHERE key = ? AND version = ?";
    private static final String INSERT = "INSERT INTO sluice_rate_state (key, state, version, expires_at)"
            + " VALUES (?, ?, ?, ?) ON CONFLICT (key) DO NOTHING";
    private static final String DELETE = "DELETE FROM sluice_rate_state WHERE key = ANY(?::text[])";
    /** A batch of expired rows, oldest first, skipping rows a decision holds locked. */
    private static final String SWEEP = "DELETE FROM sluice_rate_state WHERE key IN ("
            + "SELECT key FROM sluice_rate_state WHERE expires_at < " + DB_NOW
            + " ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)";
    private static final String OVERRIDES = "SELECT policy, value FROM sluice_override";
    private static final String PUT_OVERRIDE = "INSERT INTO sluice_override (policy, value) VALUES (?, ?)"
            + " ON CONFLICT (policy) DO UPDATE SET value = EXCLUDED.value";
    private static final String CLEAR_OVERRIDE = "DELETE FROM sluice_override WHERE policy = ?";
    /** Serialises concurrent creations: CREATE ... IF NOT EXISTS alone races on the catalogue. */
    private static final String CREATE_LOCK = "SELECT pg_advisory_xact_lock(hashtext('sluice_rate_state'))";

    /** The longest one statement may run: a hung server holds a store thread no longer. */
    static final int QUERY_TIMEOUT_SECONDS = 5;

    private Table() {
    }

    /** What {@link #read} found: the rows in the keys' order and the database's clock. */
    record Snapshot(long databaseNow, Row[] rows) {
    }

    static Snapshot read(Connection c, String[] keys) throws SQLException {
        Row[] rows = new Row[keys.length];
        Arrays.fill(rows, Row.NONE);
        long now = 0;
        boolean one = keys.length == 1;
        try (PreparedStatement ps = c.prepareStatement(one ? READ_ONE : READ)) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            Array array = one ? null : c.createArrayOf("text", keys);
            if (one) {
                ps.setString(1, keys[0]);
            } else {
                ps.setArray(1, array);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int i = (int) rs.getLong(1) - 1;
                    now = rs.getLong(5);
                    Array state = rs.getArray(2);
                    if (state != null) {
                        rows[i] = new Row(true, rs.getLong(3), rs.getLong(4), unbox((Object[]) state.getArray()));
                    }
                }
            }
            if (array != null) {
                array.free();
            }
        }
        return new Snapshot(now, rows);
    }

    /**
     * Writes every row or none: each only if it still holds the version read (or, read absent, is
     * still absent). Several rows go in one transaction, in key order so that two writers never
     * wait on each other in a cycle.
     *
     * @return whether all were written; {@code false}: another writer came first, nothing written
     */
    static boolean write(Connection c, List<Write> writes) throws SQLException {
        if (writes.size() == 1) {
            return writeOne(c, writes.get(0));
        }
        List<Write> sorted = new ArrayList<>(writes);
        sorted.sort(Comparator.comparing(Write::key));
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        boolean done = false;
        try {
            boolean all = true;
            for (int i = 0; i < sorted.size() && all; i++) {
                all = writeOne(c, sorted.get(i));
            }
            if (all) {
                c.commit();
                done = true;
                return true;
            }
            return false;
        } finally {
            if (!done) {
                c.rollback();
            }
            c.setAutoCommit(auto);
        }
    }

    private static boolean writeOne(Connection c, Write w) throws SQLException {
        long version = ThreadLocalRandom.current().nextLong();
        Array state = c.createArrayOf("bigint", box(w.next()));
        try {
            if (w.read().exists()) {
                try (PreparedStatement ps = c.prepareStatement(UPDATE)) {
                    ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
                    ps.setArray(1, state);
                    ps.setLong(2, version);
                    ps.setLong(3, w.expiresAt());
                    ps.setString(4, w.key());
                    ps.setLong(5, w.read().version());
                    return ps.executeUpdate() == 1;
                }
            }
            try (PreparedStatement ps = c.prepareStatement(INSERT)) {
                ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
                ps.setString(1, w.key());
                ps.setArray(2, state);
                ps.setLong(3, version);
                ps.setLong(4, w.expiresAt());
                return ps.executeUpdate() == 1;
            }
        } finally {
            state.free();
        }
    }

    /** Deletes the rows of these keys. */
    static void delete(Connection c, String[] keys) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(DELETE)) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            ps.setArray(1, c.createArrayOf("text", keys));
            ps.executeUpdate();
        }
    }

    /** Deletes at most {@code batch} rows expired by the database's clock, in its own short transaction. */
    static int sweep(Connection c, int batch) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SWEEP)) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            ps.setInt(1, batch);
            return ps.executeUpdate();
        }
    }

    static Map<String, String> overrides(Connection c) throws SQLException {
        Map<String, String> found = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(OVERRIDES)) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return Map.copyOf(found);
    }

    static void putOverride(Connection c, String policy, String value) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(value == null ? CLEAR_OVERRIDE : PUT_OVERRIDE)) {
            ps.setQueryTimeout(QUERY_TIMEOUT_SECONDS);
            ps.setString(1, policy);
            if (value != null) {
                ps.setString(2, value);
            }
            ps.executeUpdate();
        }
    }

    /** The statements of {@code schema.sql}, the file shipped beside this class. */
    static List<String> schema() {
        try (InputStream in = Table.class.getResourceAsStream("schema.sql")) {
            if (in == null) {
                throw new IllegalStateException("schema.sql is missing from sluice-postgres");
            }
            StringBuilder sql = new StringBuilder();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.trim().startsWith("--")) {
                    sql.append(line).append('\n');
                }
            }
            List<String> statements = new ArrayList<>();
            for (String statement : sql.toString().split(";")) {
                if (!statement.isBlank()) {
                    statements.add(statement.trim());
                }
            }
            return statements;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read schema.sql of sluice-postgres", e);
        }
    }

    /** Creates the tables if they are missing ({@code schema.sql}), in one transaction. */
    static void create(Connection c) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        boolean done = false;
        try (Statement s = c.createStatement()) {
            s.execute(CREATE_LOCK);
            for (String statement : schema()) {
                s.execute(statement);
            }
            c.commit();
            done = true;
        } finally {
            if (!done) {
                c.rollback();
            }
            c.setAutoCommit(auto);
        }
    }

    private static Long[] box(long[] values) {
        Long[] boxed = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return boxed;
    }

    private static long[] unbox(Object[] values) {
        long[] unboxed = new long[values.length];
        for (int i = 0; i < values.length; i++) {
            unboxed[i] = ((Number) values[i]).longValue();
        }
        return unboxed;
    }
}
