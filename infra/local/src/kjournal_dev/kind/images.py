"""kjournal's container images: the four components from the root Dockerfile and the two dev-only
JVM images (Kafka, Cassandra) from infra/images, all FROM `debian:bookworm-slim`.

The JVM images and the replicator take their jars from jars-only images made from kjournal-dev's
Maven cache (`<build cache>/jars/<bundle>/`), so nothing is fetched twice and the build context stays
the repository. See docs/images.md.
"""

from __future__ import annotations

import subprocess
import tomllib
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from kjournal_dev import build_cache
from kjournal_dev.artifacts import maven
from kjournal_dev.config import DevConfig
from kjournal_dev.errors import DevError
from kjournal_dev.kind import versions
from kjournal_dev.kind.base_image import image_exists
from kjournal_dev.kind.engine import Engine
from kjournal_dev.kind.progress import Progress
from kjournal_dev.kind.settings import KindSettings

TAG = "dev"
# Enough for every image's dependency layers and uv's download cache to stay warm.
BUILD_CACHE_KEEP = "5GB"


@dataclass(frozen=True)
class ImageSpec:
    name: str  # what the CLI calls it
    repository: str
    dockerfile: str  # relative to the repository root (the build context)
    target: str | None = None
    # build argument → the Maven bundle whose jars image it names
    jars: dict[str, Callable[[DevConfig], maven.Bundle]] = field(default_factory=dict)

    @property
    def image(self) -> str:
        return f"{self.repository}:{TAG}"


IMAGES: tuple[ImageSpec, ...] = (
    ImageSpec("writer", "kjournal/writer", "Dockerfile", "writer"),
    ImageSpec("reader", "kjournal/reader", "Dockerfile", "reader"),
    ImageSpec("migrate", "kjournal/migrate", "Dockerfile", "migrate"),
    ImageSpec(
        "replicator",
        "kjournal/replicator",
        "Dockerfile",
        "replicator",
        {"SPARK_KAFKA_JARS_IMAGE": lambda config: maven.spark_kafka_bundle(config.spark_version)},
    ),
    ImageSpec(
        "kafka",
        "kjournal/dev-kafka",
        "infra/images/kafka/Dockerfile",
        jars={"KAFKA_JARS_IMAGE": lambda config: maven.kafka_bundle()},
    ),
    ImageSpec(
        "cassandra",
        "kjournal/dev-cassandra",
        "infra/images/cassandra/Dockerfile",
        jars={"CASSANDRA_JARS_IMAGE": lambda config: maven.cassandra_bundle()},
    ),
)


_DOWNLOADS = {
    # What a first build downloads (later builds reuse its layers); {debian} is the base
    # image's apt mirror.
    "writer": "Python 3.11 from {debian}, Python packages from PyPI",
    "reader": "Python 3.11 from {debian}, Python packages from PyPI",
    "migrate": "Python 3.11 from {debian}, Python packages from PyPI",
    "replicator": "Python 3.11 and Java 17 from {debian}, Python packages and pyspark from PyPI",
    "kafka": "Java 17 from {debian}",
    "cassandra": "Java 17 from {debian}",
}


def specs(names: Iterable[str]) -> list[ImageSpec]:
    wanted = list(names)
    known = {spec.name: spec for spec in IMAGES}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise DevError(f"unknown image {unknown[0]!r}: one of {', '.join(known)}")
    return [known[name] for name in wanted] if wanted else list(IMAGES)


def jars_image(bundle: maven.Bundle) -> str:
    return f"kjournal.local/jars-{bundle.name}:{bundle.version}"


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def labels(root: Path) -> dict[str, str]:
    """VERSION, REVISION and SOURCE_URL build arguments for the OCI labels."""
    version = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    revision = _git(root, "rev-parse", "HEAD") or "unknown"
    if revision != "unknown" and _git(root, "status", "--porcelain", "--untracked-files=no"):
        revision += "-dirty"
    source = _git(root, "config", "--get", "remote.origin.url") or "unknown"
    return {"VERSION": str(version), "REVISION": revision, "SOURCE_URL": source}


class ImageBuilder:
    def __init__(
        self, config: DevConfig, settings: KindSettings, progress: Progress, engine: Engine
    ) -> None:
        self.config = config
        self.settings = settings
        self.progress = progress
        self.engine = engine

    def _jars_image(self, bundle: maven.Bundle) -> str:
        image = jars_image(bundle)
        if image_exists(self.engine, self.progress, image):
            return image
        if not build_cache.complete(bundle.folder(self.config)):
            self.progress.report(
                f"fetching {bundle.name} {bundle.version} jars from "
                f"{self.config.maven_repo_url or maven.MAVEN_CENTRAL} with Maven (once, into "
                f"{bundle.folder(self.config)})"
            )
        folder = maven.fetch(bundle, self.config)
        self.progress.run(
            f"making {image} from {folder}",
            self.engine.docker(
                "build",
                "--progress=plain",
                "-f",
                str(self.settings.repo_root / "infra/images/jars/Dockerfile"),
                "-t",
                image,
                str(folder),
            ),
            "images",
            env=self.engine.env(),
        )
        return image

    def build(self, spec: ImageSpec) -> str:
        root = self.settings.repo_root
        args = {"BASE_IMAGE": versions.BASE_IMAGE, **labels(root)}
        for name, bundle in spec.jars.items():
            args[name] = self._jars_image(bundle(self.config))
        cmd = self.engine.docker(
            "build", "--progress=plain", "-f", str(root / spec.dockerfile), "-t", spec.image
        )
        if spec.target:
            cmd += ["--target", spec.target]
        for name, value in args.items():
            cmd += ["--build-arg", f"{name}={value}"]
        if self.settings.ca_bundle.is_file():
            cmd += ["--secret", f"id=ca,src={self.settings.ca_bundle}"]
        first = not image_exists(self.engine, self.progress, spec.image)
        downloads = _DOWNLOADS[spec.name].format(debian=self.settings.debian_mirror)
        self.progress.run(
            f"building {spec.image}" + (f" (first build: downloads {downloads})" if first else ""),
            [*cmd, str(root)],
            f"image-{spec.name}",
            env=self.engine.env(),
        )
        return spec.image

    def prune(self) -> None:
        """Drop what rebuilding left behind: images that lost their tag to a newer build, and
        build cache beyond BUILD_CACHE_KEEP (least recently used first)."""
        env = self.engine.env()
        self.progress.capture(self.engine.docker("image", "prune", "-f"), env=env, check=False)
        self.progress.capture(
            self.engine.docker("builder", "prune", "-f", "--keep-storage", BUILD_CACHE_KEEP),
            env=env,
            check=False,
        )

    def size_mb(self, image: str) -> float | None:
        probe = self.progress.capture(
            self.engine.docker("image", "inspect", "--format", "{{.Size}}", image),
            env=self.engine.env(),
            check=False,
        )
        return int(probe.stdout.strip()) / 1e6 if probe.returncode == 0 else None
