import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/**
 * The dev Kafka image's topic step: waits until the broker at args[0] answers, then creates each
 * topic given as NAME:PARTITIONS (replication factor 1) that does not exist yet. Topics that exist
 * are left as they are. Exits 1 if the broker never answers within five minutes.
 */
public final class CreateTopics {
    private static final long PATIENCE_MS = 300_000;

    public static void main(String[] args) throws InterruptedException {
        List<NewTopic> wanted = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String[] parts = args[i].split(":", 2);
            int partitions = parts.length == 2 ? Integer.parseInt(parts[1]) : 1;
            wanted.add(new NewTopic(parts[0], partitions, (short) 1));
        }
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        long deadline = System.currentTimeMillis() + PATIENCE_MS;
        try (Admin admin = Admin.create(config)) {
            while (true) {
                try {
                    Set<String> existing = admin.listTopics().names().get();
                    List<NewTopic> missing = new ArrayList<>();
                    for (NewTopic topic : wanted) {
                        if (!existing.contains(topic.name())) {
                            missing.add(topic);
                        }
                    }
                    if (!missing.isEmpty()) {
                        admin.createTopics(missing).all().get();
                    }
                    System.out.println("create-topics: ready: " + wanted);
                    return;
                } catch (ExecutionException failure) {
                    if (failure.getCause() instanceof TopicExistsException) {
                        continue; // created meanwhile by someone else: look again
                    }
                    if (System.currentTimeMillis() > deadline) {
                        System.err.println("create-topics: broker did not answer: " + failure.getCause());
                        System.exit(1);
                    }
                    Thread.sleep(1_000);
                }
            }
        }
    }
}
