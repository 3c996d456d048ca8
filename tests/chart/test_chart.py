"""helm/kjournal rendered with each documented value set: lint, strict validation against the
Kubernetes API schemas of 1.30 to 1.34, the SparkApplication against the Spark Operator's CRD,
settings values that match the settings classes, refused bad values, hardened pods, credentials
from Secrets only, NetworkPolicies that mirror the access split, and k8s/ in step."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from kjournal_dev.errors import DevError
from kjournal_dev.generate import chart_values
from kjournal_dev.generate import k8s_manifests
from kjournal_dev.kind.helm import KUBERNETES_VERSIONS
from kjournal_dev.kind.helm import Helm

from tests.chart.conftest import CHART
from tests.chart.conftest import ROOT
from tests.chart.conftest import VALUE_SETS
from tests.chart.conftest import Render
from tests.chart.conftest import by_kind
from tests.chart.conftest import egress_ports
from tests.chart.conftest import env_of
from tests.chart.conftest import pod_peers

# Kinds of other projects' CRDs: validated on their own (SparkApplication) or not at all.
_CRD_KINDS = {"ServiceMonitor", "SparkApplication"}
_SPARK_CRD = ROOT / "tests/fixtures/spark-operator/sparkoperator.k8s.io_sparkapplications.yaml"


@pytest.mark.parametrize("value_set", list(VALUE_SETS))
def test_helm_lint_strict(helm: Helm, value_set: str):
    args = ["lint", "--strict", str(CHART)]
    for path in VALUE_SETS[value_set]:
        args += ["--values", str(path)]
    result = helm.run(args)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("value_set", list(VALUE_SETS))
def test_rendered_manifests_are_valid_kubernetes(render: Render, value_set: str, version: str):
    documents = render(VALUE_SETS[value_set], kube_version=version)
    assert documents
    for document in documents:
        if document["kind"] in _CRD_KINDS:
            continue
        try:
            kubernetes_validate.validate(document, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{document['kind']}/{document['metadata']['name']}: {exc.message}")


def _spark_application_schema() -> dict[str, Any]:
    crd = yaml.safe_load(_SPARK_CRD.read_text())
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")
    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
    return schema


def test_spark_application_matches_the_spark_operators_crd(render: Render):
    documents = render([CHART / "ci/spark-operator-values.yaml"])
    applications = by_kind(documents, "SparkApplication")
    assert list(applications) == ["kj-kjournal-replicator"]
    application = applications["kj-kjournal-replicator"]
    jsonschema.validate(application, _spark_application_schema())
    spec = application["spec"]
    assert spec["restartPolicy"]["type"] == "Always"
    assert spec["type"] == "Python"
    assert spec["mainApplicationFile"] == "local:///opt/kjournal/replicator.py"
    # No Deployment runs a second replicator beside the operator's.
    assert "kj-kjournal-replicator" not in by_kind(documents, "Deployment")


def test_the_crd_schema_refuses_what_the_operator_would(render: Render):
    """The check above has teeth: a SparkApplication the operator's API refuses fails it."""
    application = by_kind(render([CHART / "ci/spark-operator-values.yaml"]), "SparkApplication")[
        "kj-kjournal-replicator"
    ]
    application["spec"]["restartPolicy"]["type"] = "Forever"
    with pytest.raises(jsonschema.ValidationError, match="Forever"):
        jsonschema.validate(application, _spark_application_schema())


def test_the_settings_values_are_generated_from_the_settings_classes():
    assert chart_values.check() is None


@pytest.mark.parametrize("component", chart_values.COMPONENTS)
def test_every_variable_is_a_settings_value_or_the_charts_own(component: str):
    every = {v.env for v in chart_values.all_variables(component)}
    settable = {v.env for v in chart_values.chart_variables(component)}
    owned = every - settable
    assert owned <= set(chart_values.OWNED)
    assert settable | owned == every


def _sample(schema: dict[str, Any]) -> Any:
    """A valid value for one settings leaf of the generated schema."""
    if "anyOf" in schema:
        return _sample(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema["type"]
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "boolean":
        return True
    if kind == "integer":
        return max(int(schema.get("minimum", 1)), 1)
    if kind == "number":
        return 1.5
    if kind == "array":
        return ["a", "b"]
    if kind == "object":
        return {"key": "value"} if schema.get("additionalProperties") == {"type": "string"} else {}
    return "text"


def _every_leaf(schema: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name, child in schema["properties"].items():
        if child.get("type") == "object" and "properties" in child:
            values[name] = _every_leaf(child)
        else:
            values[name] = _sample(child)
    return values


def test_every_settings_value_reaches_its_component(render: Render, tmp_values):
    defs = json.loads((CHART / "values.schema.json").read_text())["$defs"]
    values: dict[str, Any] = {
        c: {"settings": _every_leaf(defs[f"{c}Settings"])} for c in chart_values.COMPONENTS
    }
    values["replicator"]["settings"]["cassandra"]["write_consistency"] = "QUORUM"
    values["tests"] = {"enabled": False}  # every leaf turns auth on, and the test pod has no token
    documents = render([tmp_values(values)])
    deployments = by_kind(documents, "Deployment")
    containers = {
        "writer": deployments["kj-kjournal-writer"]["spec"]["template"]["spec"]["containers"][0],
        "reader": deployments["kj-kjournal-reader"]["spec"]["template"]["spec"]["containers"][0],
        "replicator": deployments["kj-kjournal-replicator"]["spec"]["template"]["spec"][
            "containers"
        ][0],
        "migrate": by_kind(documents, "Job")["kj-kjournal-migrate"]["spec"]["template"]["spec"][
            "containers"
        ][0],
    }
    for component, container in containers.items():
        env = env_of(container)
        missing = {v.env for v in chart_values.chart_variables(component)} - set(env)
        assert not missing, (component, missing)
    replicator = env_of(containers["replicator"])
    assert json.loads(replicator["KJOURNAL_SPARK__CONF"])["key"] == "value"
    assert replicator["KJOURNAL_CASSANDRA__CONTACT_POINTS"] == "a,b"
    assert env_of(containers["writer"])["KJOURNAL_HTTP__MAX_BODY_BYTES"] == "1024"


def test_settings_render_as_the_variables_read_them(render: Render, tmp_values):
    documents = render(
        [
            tmp_values(
                {
                    "settings": {"cassandra": {"contact_points": ["c1", "c2"]}},
                    "reader": {
                        "settings": {
                            "fold": {"payload_budget_bytes": 134217728},
                            "cassandra": {"replication": {"data_centers": {"dc1": 3}}},
                        }
                    },
                    "writer": {"settings": {"http": {"access_log": True}}},
                }
            )
        ]
    )
    deployments = by_kind(documents, "Deployment")
    reader = env_of(deployments["kj-kjournal-reader"]["spec"]["template"]["spec"]["containers"][0])
    assert reader["KJOURNAL_FOLD__PAYLOAD_BUDGET_BYTES"] == "134217728"
    assert reader["KJOURNAL_CASSANDRA__CONTACT_POINTS"] == "c1,c2"
    assert json.loads(reader["KJOURNAL_CASSANDRA__REPLICATION__DATA_CENTERS"]) == {"dc1": 3}
    writer = env_of(deployments["kj-kjournal-writer"]["spec"]["template"]["spec"]["containers"][0])
    assert writer["KJOURNAL_HTTP__ACCESS_LOG"] == "true"
    assert "KJOURNAL_CASSANDRA__CONTACT_POINTS" not in writer  # the writer has no Cassandra


@pytest.mark.parametrize(
    ("sets", "complaint"),
    [
        ({"replicator.mode": "yarn"}, "/replicator/mode"),
        ({"writer.replicas": "two"}, "/writer/replicas"),
        ({"writer.settings.http.max_body_bytes": "12"}, "/writer/settings/http/max_body_bytes"),
        ({"writer.settings.http.port": "9000"}, "/writer/settings/http"),
        ({"settings.cassandra.password": "hunter2"}, "/settings/cassandra"),
        ({"settings.kafka.compression": "brotli"}, "/settings/kafka/compression"),
        (
            {"reader.settings.cassandra.read_consistency": "MOST"},
            "/reader/settings/cassandra/read_consistency",
        ),
        ({"replicator.executors.memory": "lots"}, "/replicator/executors/memory"),
        (
            {"writer.podDisruptionBudget.maxUnavailable": "half"},
            "/writer/podDisruptionBudget/maxUnavailable",
        ),
        ({"unknownTopLevel": "x"}, "unknownTopLevel"),
    ],
)
def test_wrong_values_are_refused_with_their_name(
    render: Render, sets: dict[str, str], complaint: str
):
    with pytest.raises(DevError, match="values don't meet the specifications") as error:
        render(sets=sets)
    assert complaint in str(error.value)


def _pod_specs(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    specs = {}
    for document in documents:
        name = f"{document['kind']}/{document['metadata']['name']}"
        if document["kind"] in ("Deployment", "Job"):
            specs[name] = document["spec"]["template"]["spec"]
        elif document["kind"] == "Pod":
            specs[name] = document["spec"]
        elif document["kind"] == "ConfigMap" and "executor-pod.yaml" in document["data"]:
            specs[f"{name}/executor"] = yaml.safe_load(document["data"]["executor-pod.yaml"])[
                "spec"
            ]
    return specs


@pytest.mark.parametrize("value_set", list(VALUE_SETS))
def test_every_pod_is_hardened(render: Render, value_set: str):
    documents = render(VALUE_SETS[value_set])
    specs = _pod_specs(documents)
    assert specs
    for name, spec in specs.items():
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"] == {"drop": ["ALL"]}, name
        # Only the Spark driver talks to the API server (it runs its executors).
        driver = name == "Deployment/kj-kjournal-replicator" and "local" not in value_set
        assert spec["automountServiceAccountToken"] is driver, name
    for application in by_kind(documents, "SparkApplication").values():
        for role in ("driver", "executor"):
            assert application["spec"][role]["securityContext"]["readOnlyRootFilesystem"]
            assert application["spec"][role]["podSecurityContext"]["runAsNonRoot"]


def test_credentials_come_only_from_secrets(render: Render):
    documents = render([CHART / "ci/production-values.yaml"])
    for name, spec in _pod_specs(documents).items():
        for container in spec["containers"]:
            for entry in container.get("env", []):
                if entry["name"].endswith(("PASSWORD", "USERNAME")):
                    assert "secretKeyRef" in entry["valueFrom"], (name, entry)
    reader = by_kind(documents, "Deployment")["kj-kjournal-reader"]
    env = env_of(reader["spec"]["template"]["spec"]["containers"][0])
    assert env["KJOURNAL_CASSANDRA__PASSWORD"]["secretKeyRef"]["name"] == (
        "kjournal-cassandra-reader"
    )
    migrate = by_kind(documents, "Job")["kj-kjournal-migrate"]
    env = env_of(migrate["spec"]["template"]["spec"]["containers"][0])
    assert env["KJOURNAL_CASSANDRA__PASSWORD"]["secretKeyRef"]["name"] == (
        "kjournal-cassandra-migrate"
    )
    assert not [d for d in documents if d["kind"] == "Secret"]
    for config_map in by_kind(documents, "ConfigMap").values():
        assert "password" not in json.dumps(config_map).lower()


def test_auth_keys_and_the_test_token_come_from_secrets(render: Render):
    documents = render([CHART / "ci/production-values.yaml"])
    deployments = by_kind(documents, "Deployment")
    for component in ("writer", "reader"):
        spec = deployments[f"kj-kjournal-{component}"]["spec"]["template"]["spec"]
        env = env_of(spec["containers"][0])
        assert env["KJOURNAL_AUTH__ENABLED"] == "true", component
        assert env["KJOURNAL_AUTH__ISSUER"] == "https://login.example.com/", component
        assert env["KJOURNAL_AUTH__JWKS_FILE"] == "/etc/kjournal/auth/jwks.json", component
        mount = {"name": "jwks", "mountPath": "/etc/kjournal/auth", "readOnly": True}
        # mounted whole: a subPath mount would never see a rotated key
        assert mount in spec["containers"][0]["volumeMounts"], component
        assert {"name": "jwks", "secret": {"secretName": "kjournal-jwks"}} in spec["volumes"]
    driver = deployments["kj-kjournal-replicator"]["spec"]["template"]["spec"]
    assert not [name for name in env_of(driver["containers"][0]) if "AUTH" in name]
    test_pod = by_kind(documents, "Pod")["kj-kjournal-test"]
    assert env_of(test_pod["spec"]["containers"][0])["KJOURNAL_TOKEN"] == {
        "secretKeyRef": {"name": "kjournal-test-token", "key": "token"}
    }
    assert "kjournal-jwks" not in json.dumps(by_kind(documents, "ConfigMap"))


_AUTH_ON = {
    "settings.auth.enabled": "true",
    "settings.auth.issuer": "https://login.example.com/",
    "settings.auth.audience": "kjournal",
}


@pytest.mark.parametrize(
    ("sets", "complaint"),
    [
        ({"settings.auth.enabled": "true"}, "needs the issuer's keys: auth.jwksSecret.name"),
        (
            {"settings.auth.enabled": "true", "auth.jwksSecret.name": "jwks"},
            "needs settings.auth.issuer and settings.auth.audience",
        ),
        (
            {**_AUTH_ON, "auth.jwksSecret.name": "jwks", "settings.auth.jwks_url": "https://k"},
            "set either auth.jwksSecret.name or settings.auth.jwks_url, not both",
        ),
        ({**_AUTH_ON, "auth.jwksSecret.name": "jwks"}, "needs tests.tokenSecret.name"),
        (
            {
                "reader.settings.auth.enabled": "true",
                "reader.settings.auth.issuer": "i",
                "reader.settings.auth.audience": "a",
                "reader.settings.auth.jwks_url": "https://k",
            },
            "needs tests.tokenSecret.name",
        ),
    ],
)
def test_auth_without_what_it_needs_is_refused_by_helm(
    render: Render, sets: dict[str, str], complaint: str
):
    with pytest.raises(DevError, match="execution error") as error:
        render(sets=sets)
    assert complaint in str(error.value)


def test_auth_with_a_jwks_url_and_no_helm_test_needs_no_secret(render: Render):
    documents = render(
        sets={**_AUTH_ON, "settings.auth.jwks_url": "https://k/jwks", "tests.enabled": "false"}
    )
    writer = by_kind(documents, "Deployment")["kj-kjournal-writer"]["spec"]["template"]["spec"]
    env = env_of(writer["containers"][0])
    assert env["KJOURNAL_AUTH__JWKS_URL"] == "https://k/jwks"
    assert "KJOURNAL_AUTH__JWKS_FILE" not in env
    assert "jwks" not in [volume["name"] for volume in writer["volumes"]]


def test_network_policies_mirror_the_access_split(render: Render):
    policies = by_kind(render([CHART / "ci/production-values.yaml"]), "NetworkPolicy")
    dns, kafka, cassandra, api, otlp = {53}, {9093}, {9042}, {443, 6443}, {4318}
    reader_http = {8080}  # the writer asks the reader each append's outcome (docs/concurrency.md)
    assert egress_ports(policies["kj-kjournal-writer"]) == dns | kafka | otlp | reader_http
    assert egress_ports(policies["kj-kjournal-reader"]) == dns | kafka | cassandra | otlp
    assert egress_ports(policies["kj-kjournal-replicator"]) == (
        dns | kafka | cassandra | api | otlp
    )
    assert egress_ports(policies["kj-kjournal-replicator-executor"]) == (
        dns | kafka | cassandra | otlp
    )
    assert egress_ports(policies["kj-kjournal-migrate"]) == dns | cassandra
    for name in ("kj-kjournal-writer", "kj-kjournal-reader"):
        peers = policies[name]["spec"]["ingress"][0]["from"]
        assert {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "shop"}},
            "podSelector": {"matchLabels": {"app": "orders"}},
        } in peers
    assert policies["kj-kjournal-writer"]["spec"]["policyTypes"] == ["Ingress", "Egress"]


def test_spark_pods_may_talk_to_each_other_and_the_driver_to_its_executors(render: Render):
    policies = by_kind(render([CHART / "ci/production-values.yaml"]), "NetworkPolicy")
    driver = policies["kj-kjournal-replicator"]["spec"]
    executor = policies["kj-kjournal-replicator-executor"]["spec"]
    assert pod_peers(driver["ingress"], "from") == {"replicator-executor"}
    assert pod_peers(driver["egress"], "to") == {"replicator-executor"}
    # executors fetch broadcast and shuffle blocks from one another's block manager
    assert pod_peers(executor["ingress"], "from") == {"replicator", "replicator-executor"}
    assert pod_peers(executor["egress"], "to") == {"replicator", "replicator-executor"}


def test_a_jwks_url_opens_egress_to_the_issuer_only_where_it_is_used(render: Render):
    policies = by_kind(
        render(
            sets={
                "networkPolicy.enabled": "true",
                "tests.enabled": "false",
                "reader.settings.auth.enabled": "true",
                "reader.settings.auth.issuer": "i",
                "reader.settings.auth.audience": "a",
                "reader.settings.auth.jwks_url": "https://login.example.com/jwks",
            }
        ),
        "NetworkPolicy",
    )
    assert 443 in egress_ports(policies["kj-kjournal-reader"])
    assert 443 not in egress_ports(policies["kj-kjournal-writer"])


def test_uninstall_keeps_only_the_checkpoint_claim(render: Render):
    kept = [
        f"{d['kind']}/{d['metadata']['name']}"
        for d in render()
        if d["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep"
    ]
    assert kept == ["PersistentVolumeClaim/kj-kjournal-replicator-checkpoint"]


def test_plain_manifests_in_k8s_match_the_chart(helm: Helm):
    assert k8s_manifests.check(helm) is None


def test_plain_manifests_hold_no_helm_hooks_but_the_schema_job():
    base = [d for d in yaml.safe_load_all((ROOT / "k8s/base/kjournal.yaml").read_text()) if d]
    assert not [d for d in base if "helm.sh/hook" in d["metadata"].get("annotations", {})]
    migrate = [
        d for d in yaml.safe_load_all(Path(ROOT / "k8s/migrate/migrate-job.yaml").read_text()) if d
    ]
    assert [d["kind"] for d in migrate] == ["Job"]


def _containers_with_env(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    containers = {}
    for name, spec in _pod_specs(documents).items():
        if name.startswith(("Deployment/", "ConfigMap/")):
            containers[name] = env_of(spec["containers"][0])
    for application in by_kind(documents, "SparkApplication").values():
        for role in ("driver", "executor"):
            containers[f"SparkApplication/{role}"] = env_of(application["spec"][role])
    return containers


@pytest.mark.parametrize("value_set", ["defaults", "spark-operator-values"])
def test_without_an_otlp_endpoint_tracing_is_off_in_every_pod(render: Render, value_set: str):
    containers = _containers_with_env(render(VALUE_SETS[value_set]))
    # the services, the driver and the executors (pod template or SparkApplication)
    assert len(containers) >= 4
    for name, env in containers.items():
        assert env.get("OTEL_SDK_DISABLED") == "true", name
        assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env, name


def test_the_otlp_endpoint_reaches_every_pod_executors_included(render: Render):
    containers = _containers_with_env(render(sets={"otlp.endpoint": "http://collector:4318"}))
    assert "ConfigMap/kj-kjournal-replicator-spark/executor" in containers
    for name, env in containers.items():
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://collector:4318", name
        assert env["OTEL_SERVICE_NAME"].startswith("kjournal-"), name
        assert "OTEL_SDK_DISABLED" not in env, name
        # sampled by default: a caller's decision kept, 1 % of new traces
        assert env["OTEL_TRACES_SAMPLER"] == "parentbased_traceidratio", name
        assert env["OTEL_TRACES_SAMPLER_ARG"] == "0.01", name


def test_tracing_everything_is_one_value(render: Render):
    sets = {"otlp.endpoint": "http://collector:4318", "otlp.sampler": "parentbased_always_on"}
    for name, env in _containers_with_env(render(sets=sets)).items():
        assert env["OTEL_TRACES_SAMPLER"] == "parentbased_always_on", name
        assert "OTEL_TRACES_SAMPLER_ARG" not in env, name


def test_the_grafana_dashboard_config_map_holds_deploy_grafana(render: Render):
    config_maps = by_kind(render([CHART / "ci/production-values.yaml"]), "ConfigMap")
    dashboards = config_maps["kj-kjournal-dashboards"]
    assert dashboards["metadata"]["labels"]["grafana_dashboard"] == "1"
    shipped = {p.name: json.loads(p.read_text()) for p in (ROOT / "deploy/grafana").glob("*.json")}
    assert shipped
    assert {k: json.loads(v) for k, v in dashboards["data"].items()} == shipped
    assert "kj-kjournal-dashboards" not in by_kind(render(), "ConfigMap")
