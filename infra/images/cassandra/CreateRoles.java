import com.datastax.driver.core.Cluster;
import com.datastax.driver.core.Session;
import com.datastax.driver.core.exceptions.AuthenticationException;
import com.datastax.driver.core.exceptions.DriverException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The dev Cassandra image's role step: the node requires authentication (PasswordAuthenticator,
 * CassandraAuthorizer), and this step makes the roles a kjournal release logs in with, from the
 * credentials mounted under args[2] (a folder per role, each with `username` and `password`):
 *
 * <ul>
 *   <li>{@code admin}: a superuser, created once by the node's default superuser `cassandra`,
 *       which it then drops (its password is public knowledge);
 *   <li>{@code ddl}: CREATE and ALTER on the keyspace (the schema hook);
 *   <li>{@code write}: SELECT and MODIFY on the keyspace (the replicator);
 *   <li>{@code read}: SELECT on the keyspace (the reader).
 * </ul>
 *
 * <p>The keyspace (args[3]) is created here, before the schema hook runs, so that the grants have
 * something to name: production grants MODIFY table by table (docs/security.md), which needs the
 * tables to exist first. Every step can run again: a restarted node finds its roles, and their
 * passwords are set to the mounted ones. Once done, the file args[4] is written (the pod's
 * readiness). Waits up to five minutes for the node at args[0]:args[1]; exits 1 if it never
 * lets the admin or the default superuser in.
 */
public final class CreateRoles {
    private static final long PATIENCE_MS = 300_000;
    private static final String DEFAULT_SUPERUSER = "cassandra";

    private record Credentials(String username, String password) {}

    public static void main(String[] args) throws IOException, InterruptedException {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        Path roles = Paths.get(args[2]);
        String keyspace = args[3];
        Path done = Paths.get(args[4]);
        Credentials admin = read(roles.resolve("admin"));
        long deadline = System.currentTimeMillis() + PATIENCE_MS;
        String last = "";
        while (true) {
            try (Cluster cluster = cluster(host, port, admin); Session session = cluster.connect()) {
                setUp(session, roles, keyspace, admin);
                Files.writeString(done, "ready\n");
                System.out.println("roles: ready (" + roles + ")");
                return;
            } catch (AuthenticationException notYet) {
                last = notYet.getMessage();
                createAdmin(host, port, admin);
            } catch (DriverException failed) {  // the node not up yet, or a step failed: again
                if (!failed.getMessage().equals(last)) {
                    System.err.println("roles: not yet: " + failed.getMessage());
                }
                last = failed.getMessage();
            }
            if (System.currentTimeMillis() > deadline) {
                System.err.println("roles: the node never let " + admin.username() + " in: " + last);
                System.exit(1);
            }
            Thread.sleep(1_000);
        }
    }

    private static Cluster cluster(String host, int port, Credentials who) {
        return Cluster.builder()
                .addContactPoint(host)
                .withPort(port)
                .withCredentials(who.username(), who.password())
                .withoutJMXReporting()
                .withoutMetrics()
                .build();
    }

    /** As the default superuser (on a fresh node, once it has made it): create the admin. */
    private static void createAdmin(String host, int port, Credentials admin) {
        Credentials initial = new Credentials(DEFAULT_SUPERUSER, DEFAULT_SUPERUSER);
        try (Cluster cluster = cluster(host, port, initial); Session session = cluster.connect()) {
            session.execute(
                    "CREATE ROLE IF NOT EXISTS " + admin.username()
                            + " WITH SUPERUSER = true AND LOGIN = true AND PASSWORD = "
                            + quoted(admin.password()));
            System.out.println("roles: created " + admin.username());
        } catch (DriverException notYet) {
            // The node has not made its default superuser yet, or it was dropped: try again.
        }
    }

    private static void setUp(Session session, Path roles, String keyspace, Credentials admin)
            throws IOException {
        if (!admin.username().equals(DEFAULT_SUPERUSER)) {
            session.execute("DROP ROLE IF EXISTS " + DEFAULT_SUPERUSER);
        }
        session.execute(
                "CREATE KEYSPACE IF NOT EXISTS " + keyspace
                        + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        grant(session, roles.resolve("ddl"), keyspace, "CREATE", "ALTER");
        grant(session, roles.resolve("write"), keyspace, "SELECT", "MODIFY");
        grant(session, roles.resolve("read"), keyspace, "SELECT");
    }

    private static void grant(Session session, Path folder, String keyspace, String... permissions)
            throws IOException {
        if (!Files.isDirectory(folder)) {
            return;
        }
        Credentials role = read(folder);
        String password = quoted(role.password());
        boolean exists =
                session.execute("SELECT role FROM system_auth.roles WHERE role = ?", role.username())
                                .one()
                        != null;
        // A role made before (a restarted node) takes the mounted password; a new one is made
        // with it (Cassandra refuses a second password change within seconds of the first).
        session.execute(
                (exists ? "ALTER ROLE " : "CREATE ROLE ") + role.username()
                        + (exists ? " WITH" : " WITH LOGIN = true AND")
                        + " PASSWORD = " + password);
        for (String permission : permissions) {
            session.execute(
                    "GRANT " + permission + " ON KEYSPACE " + keyspace + " TO " + role.username());
        }
        System.out.println(
                "roles: " + role.username() + " may " + String.join(", ", permissions) + " on "
                        + keyspace);
    }

    private static Credentials read(Path folder) throws IOException {
        return new Credentials(
                Files.readString(folder.resolve("username"), StandardCharsets.UTF_8).strip(),
                Files.readString(folder.resolve("password"), StandardCharsets.UTF_8).strip());
    }

    private static String quoted(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
