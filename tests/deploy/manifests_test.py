#!/usr/bin/env python3
"""The deploy manifests agree with the service, so they cannot drift from the code.

Parses every YAML file under deploy/kubernetes/ and deploy/container/compose.yaml, and checks
them against what the binary says (`refgate check-config`: the setting names, their defaults and
that the manifests' values are accepted), the routes the sources register (/healthz, /readyz,
/metrics) and the image (its uid, state folder and ports in deploy/container/Containerfile).
When kubectl is on PATH, the kustomizations are rendered too (`kubectl kustomize`).

Usage: manifests_test.py REFGATE_BINARY
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "kubernetes"
CONTAINER = ROOT / "deploy" / "container"
failures = []


def check(ok, message):
    if not ok:
        failures.append(message)


def load_all(path):
    with open(path, encoding="utf-8") as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def settings(binary, env=None):
    """`refgate check-config` as a dict; None with the error when it refuses the settings."""
    with tempfile.TemporaryDirectory() as state:
        base = {"PATH": os.environ.get("PATH", ""), "HOME": state, "REFGATE_STATE_DIR": state}
        run = subprocess.run([binary, "check-config"], env={**base, **(env or {})},
                             capture_output=True, text=True, check=False)
    if run.returncode != 0:
        return None, run.stderr.strip()
    text = run.stdout.rsplit("configuration ok", 1)[0]
    return json.loads(text), ""


def env_name(key):
    return "REFGATE_" + key.upper()


def port_of(endpoint):
    return int(endpoint.rsplit(":", 1)[1])


def routes_in_sources():
    text = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "src").rglob("*.cpp"))
    return set(re.findall(r'exact\("(/[a-z]+)"', text))


def image_facts():
    """uid, state folder and listen ports of the runtime image."""
    setup = (CONTAINER / "runtime-setup.sh").read_text(encoding="utf-8")
    uid = int(re.search(r"useradd .*--uid (\d+)", setup).group(1))
    containerfile = (CONTAINER / "Containerfile").read_text(encoding="utf-8")
    env = dict(re.findall(r"(REFGATE_[A-Z_]+)=(\S+)", containerfile))
    exposed = {int(p) for p in re.search(r"^EXPOSE (.*)$", containerfile, re.M).group(1).split()}
    user = re.search(r"^USER (\S+)$", containerfile, re.M).group(1)
    volume = re.search(r"^VOLUME (\S+)$", containerfile, re.M).group(1)
    return uid, env, exposed, user, volume


def runtime_stage(path):
    """The instructions after the runtime stage's RUN (runtime-setup.sh) to the end: the same in
    both Containerfiles."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if line and not line.startswith("#")]
    instructions = []
    for line in lines:
        if instructions and instructions[-1].endswith("\\"):
            instructions[-1] = instructions[-1][:-1] + " " + line.strip()
        else:
            instructions.append(line)
    start = next(i for i, instruction in enumerate(instructions)
                 if instruction.startswith("RUN ") and "/tmp/setup/runtime-setup.sh" in instruction)
    keep = [i for i in instructions[start + 1:] if not i.startswith("COPY")]
    return keep


def check_image(uid, env, exposed, user, volume):
    check(user == f"{uid}:{uid}", f"Containerfile USER {user} is not the uid {uid} runtime-setup.sh makes")
    check({port_of(env["REFGATE_LISTEN"]), port_of(env["REFGATE_ADMIN_LISTEN"])} == exposed,
          f"Containerfile EXPOSE {exposed} differs from its REFGATE_LISTEN/REFGATE_ADMIN_LISTEN")
    check(env["REFGATE_STATE_DIR"] == volume, "Containerfile VOLUME is not REFGATE_STATE_DIR")
    check(runtime_stage(CONTAINER / "Containerfile") == runtime_stage(CONTAINER / "Containerfile.prebuilt"),
          "the runtime stages of Containerfile and Containerfile.prebuilt differ")


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(refgate VERSION ([0-9.]+)", text).group(1)


def by_kind(docs):
    out = {}
    for doc in docs:
        out.setdefault(doc["kind"], []).append(doc)
    return out


def pod_env_names(container):
    names = [e["name"] for e in container.get("env", [])]
    return names


def check_pod(pod, what, known, config, uid, secret_keys):
    spec = pod["spec"]
    sc = spec.get("securityContext", {})
    check(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == uid,
          f"{what}: not runAsNonRoot as the image's uid {uid}")
    check(spec.get("automountServiceAccountToken") is False, f"{what}: mounts a service account token")
    (container,) = spec["containers"]
    csc = container.get("securityContext", {})
    check(csc.get("readOnlyRootFilesystem") is True, f"{what}: root file system is writable")
    check(csc.get("allowPrivilegeEscalation") is False, f"{what}: allows privilege escalation")
    check(csc.get("capabilities", {}).get("drop") == ["ALL"], f"{what}: keeps capabilities")
    for name in pod_env_names(container):
        check(name in known, f"{what}: env {name} is no refgate setting")
    refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})}
    check(set(refs) == {"REFGATE_DATABASE_URL", "REFGATE_REDIS_URL"},
          f"{what}: the database and Redis URLs (and only they) must come from the Secret: {sorted(refs)}")
    for ref in refs.values():
        check(ref["name"] == "refgate-secrets" and ref["key"] in secret_keys,
              f"{what}: unexpected secret reference {ref}")
    check(container.get("envFrom") == [{"configMapRef": {"name": "refgate-settings"}}],
          f"{what}: settings must come from ConfigMap refgate-settings")
    mounts = {m["mountPath"] for m in container.get("volumeMounts", [])}
    check(config["state_dir"] in mounts, f"{what}: no volume at the state dir {config['state_dir']}")
    check("memory" in container.get("resources", {}).get("limits", {}), f"{what}: no memory limit")
    return container


def check_deployment(docs, config, routes):
    (deploy,) = docs["Deployment"]
    pod = deploy["spec"]["template"]
    labels = pod["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in deploy["spec"]["selector"]["matchLabels"].items()),
          "Deployment selector does not match its pod labels")
    container = pod["spec"]["containers"][0]
    check(container.get("args") == ["serve"], "Deployment container does not run `serve`")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    check(ports.get("http") == port_of(config["listen"]),
          f"container port http {ports.get('http')} is not REFGATE_LISTEN's {config['listen']}")
    check(ports.get("admin") == port_of(config["admin_listen"]),
          f"container port admin {ports.get('admin')} is not REFGATE_ADMIN_LISTEN's {config['admin_listen']}")
    probes = {k: container.get(k, {}).get("httpGet", {}) for k in
              ("startupProbe", "livenessProbe", "readinessProbe")}
    want = {"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"}
    for kind, path in want.items():
        check(probes[kind].get("path") == path and path in routes,
              f"{kind} must GET {path} (a route refgate serves): {probes[kind]}")
        check(probes[kind].get("port") == "http", f"{kind} must use the public port (named http)")
    stop_ms = int(config["drain_ms"]) + int(config["shutdown_timeout_ms"])
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    check(grace * 1000 > stop_ms, f"terminationGracePeriodSeconds {grace} s does not cover "
          f"drain_ms + shutdown_timeout_ms = {stop_ms} ms")
    check("preStop" not in container.get("lifecycle", {}), "the drain needs no preStop hook")
    check("cpu" in container["resources"]["requests"], "the HPA needs a CPU request")
    return labels, ports


def check_services(docs, labels, ports):
    targets = {}
    for svc in docs["Service"]:
        sel = svc["spec"]["selector"]
        check(all(labels.get(k) == v for k, v in sel.items()),
              f"Service {svc['metadata']['name']} selects no refgate pod")
        for p in svc["spec"]["ports"]:
            check(p["targetPort"] in ports, f"Service {svc['metadata']['name']} targets unknown port {p}")
            targets[svc["metadata"]["name"]] = p["targetPort"]
    check(targets.get("refgate") == "http", "Service refgate must expose the public port only")
    check(targets.get("refgate-admin") == "admin", "Service refgate-admin must expose the admin port")


def check_policy_and_scaling(docs, labels):
    (pdb,) = docs["PodDisruptionBudget"]
    check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(), "PDB selects no pod")
    (hpa,) = docs["HorizontalPodAutoscaler"]
    check(hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "refgate"},
          "HPA does not scale the Deployment")
    check([m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"], "HPA must scale on CPU")
    check(hpa["spec"]["minReplicas"] >= pdb["spec"]["minAvailable"] + 1,
          "HPA minReplicas leaves the PDB no pod to evict")
    (netpol,) = docs["NetworkPolicy"]
    check(netpol["spec"]["podSelector"]["matchLabels"].items() <= labels.items(), "NetworkPolicy selects no pod")
    for rule in netpol["spec"]["ingress"]:
        ports = {p["port"] for p in rule["ports"]}
        if "admin" in ports:
            peers = rule.get("from", [])
            check(peers and all(p.get("podSelector", {}).get("matchLabels") for p in peers),
                  "NetworkPolicy opens the admin port to every pod")
            check(ports == {"admin"}, "the admin port's rule must not open other ports")
    opened = {p["port"] for r in netpol["spec"]["ingress"] for p in r["ports"]}
    check(opened == {"http", "admin"}, f"NetworkPolicy opens {opened}")


def check_kubernetes(config, known, routes, uid):
    base = by_kind(d for f in sorted((K8S / "base").glob("*.yaml")) if f.name != "kustomization.yaml"
                   for d in load_all(f))
    kust = load_all(K8S / "base" / "kustomization.yaml")[0]
    listed = {f for f in kust["resources"]}
    present = {f.name for f in (K8S / "base").glob("*.yaml")} - {"kustomization.yaml"}
    check(listed == present, f"base/kustomization.yaml lists {sorted(listed)}, the folder has {sorted(present)}")
    (cm,) = base["ConfigMap"]
    for name in cm["data"]:
        check(name in known, f"ConfigMap key {name} is no refgate setting")
    cm_config, error = settings(BINARY, {**cm["data"], "REFGATE_DATABASE_URL": "postgresql://u:p@db/refgate",
                                          "REFGATE_REDIS_URL": "redis://:p@redis:6379/0"})
    check(cm_config is not None, f"refgate check-config refuses the ConfigMap: {error}")
    if cm_config is None:
        return
    secret_keys = {"database-url", "redis-url"}
    labels, ports = check_deployment(base, cm_config, routes)
    check_pod(base["Deployment"][0]["spec"]["template"], "Deployment", known, cm_config, uid, secret_keys)
    check_services(base, labels, ports)
    check_policy_and_scaling(base, labels)
    (job,) = load_all(K8S / "migrate" / "job.yaml")
    check(job["kind"] == "Job", "migrate/job.yaml is not a Job")
    container = check_pod(job["spec"]["template"], "migration Job", known, cm_config, uid, secret_keys)
    check(container.get("args") == ["migrate"], "the migration Job does not run `migrate`")
    check(container["image"] == base["Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["image"],
          "the migration Job and the Deployment name different images")
    version = project_version()
    check(container["image"] == f"localhost/refgate:{version}",
          f"the manifests name {container['image']}, build.sh tags localhost/refgate:{version}")
    (release,) = load_all(K8S / "overlays" / "example" / "release" / "kustomization.yaml")
    check([i["newTag"] for i in release["images"]] == [version],
          f"the example overlay's image tag is not the project's version {version}")
    (monitor,) = load_all(K8S / "components" / "prometheus-operator" / "podmonitor.yaml")
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    check(endpoint["port"] == "admin" and endpoint["path"] == "/metrics" and "/metrics" in routes,
          f"PodMonitor must scrape /metrics on the admin port: {endpoint}")
    check(monitor["spec"]["selector"]["matchLabels"].items() <= labels.items(), "PodMonitor selects no pod")
    docs = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    for key in secret_keys:
        check(f"--from-literal={key}=" in docs, f"docs/deploying.md does not create the Secret key {key}")
    render_overlays()


def render_overlays():
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print("note: no kubectl; the overlays were checked file by file only")
        return
    for overlay in (K8S / "overlays" / "example", K8S / "overlays" / "example" / "migrate"):
        run = subprocess.run([kubectl, "kustomize", str(overlay)], capture_output=True, text=True, check=False)
        check(run.returncode == 0, f"kubectl kustomize {overlay} failed: {run.stderr.strip()}")
        if run.returncode == 0:
            for doc in yaml.safe_load_all(run.stdout):
                check(doc["metadata"].get("namespace") == "refgate", f"{doc['kind']} outside namespace refgate")
    print("rendered the example overlays with kubectl kustomize")


def check_compose(known, uid):
    (compose,) = load_all(CONTAINER / "compose.yaml")
    services = compose["services"]
    _, image_env, exposed, _, volume = image_facts()
    for name in ("migrate", "refgate"):
        for key in services[name]["environment"]:
            check(key in known, f"compose {name}: env {key} is no refgate setting")
    check(services["migrate"]["command"] == ["migrate"], "compose: migrate does not run `migrate`")
    check(services["migrate"]["image"] == services["refgate"]["image"], "compose: migrate and refgate images differ")
    check(services["refgate"]["image"] == f"localhost/refgate:${{REFGATE_VERSION:-{project_version()}}}",
          f"compose's image is not build.sh's localhost/refgate:{project_version()}")
    check(services["refgate"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully",
          "compose: refgate does not wait for the migration")
    published = {str(p).rsplit(":", 1)[1] for p in services["refgate"]["ports"]}
    check(published == {str(p) for p in exposed}, f"compose publishes {published}, the image listens on {exposed}")
    check(any(v.endswith(":" + volume) for v in services["refgate"]["volumes"]),
          "compose: no volume on the image's state folder")
    redis = " ".join(services["redis"]["command"])
    check("--appendonly yes" in redis and "--maxmemory-policy noeviction" in redis,
          "compose: Redis must run with AOF and noeviction")
    env = {k: str(v) for k, v in services["refgate"]["environment"].items()}
    # ${NAME:-default} as its default, any other ${...} as a placeholder.
    env = {k: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", v) for k, v in env.items()}
    env = {k: re.sub(r"\$\{[^}]*\}", "x", v) for k, v in env.items()}
    config, error = settings(BINARY, {**image_env, **env})
    check(config is not None, f"refgate check-config refuses compose's settings: {error}")
    prom = load_all(CONTAINER / "prometheus.yml")[0]
    target = prom["scrape_configs"][0]["static_configs"][0]["targets"][0]
    check(target == f"refgate:{port_of(image_env['REFGATE_ADMIN_LISTEN'])}",
          f"compose's Prometheus scrapes {target}, not refgate's admin port")
    check(int(re.sub(r"\D", "", services["refgate"]["stop_grace_period"])) * 1000 >
          int(env["REFGATE_DRAIN_MS"]) + int(env["REFGATE_SHUTDOWN_TIMEOUT_MS"]),
          "compose: stop_grace_period does not cover the drain and the shutdown timeout")


def main():
    defaults, error = settings(BINARY)
    if defaults is None:
        sys.exit(f"refgate check-config failed: {error}")
    known = {env_name(k) for k in defaults}
    routes = routes_in_sources()
    check({"/healthz", "/readyz", "/metrics"} <= routes, f"routes found in src/: {sorted(routes)}")
    uid, env, exposed, user, volume = image_facts()
    check_image(uid, env, exposed, user, volume)
    check_kubernetes(defaults, known, routes, uid)
    check_compose(known, uid)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print("deploy/kubernetes, compose.yaml and the Containerfiles agree with refgate")


if __name__ == "__main__":
    BINARY = sys.argv[1]
    main()
