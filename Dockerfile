# ovn-northd-py in a container, beside NB/SB ovsdb-servers reachable through sockets or TCP/TLS.
#
#   sudo bash scripts/container.sh   # buildah, a local debootstrap'd bookworm base: see README
#   sudo podman run -d --name ovn-northd-py --network=host -v /var/run/ovn:/var/run/ovn \
#       localhost/ovn-northd-py --ovnsb-db=tcp:127.0.0.1:6642
#   sudo podman healthcheck run ovn-northd-py; sudo podman stop ovn-northd-py
#
# Other builders: `docker build -t ovn-northd-py .` (from debian:12-slim; BuildKit for the secret).
# Configuration: OVN_NB_DB, OVN_SB_DB (remotes, comma-separated for a cluster), and
# OVN_NORTHD_METRICS_ADDRESS (default 127.0.0.1:9476, i.e. inside the container only) from the
# environment; any ovn-northd option as arguments (e.g. --ovnsb-db=..., -p/-c/-C for ssl: remotes).
# It runs as the unprivileged user ovn-northd (uid 10001): the mounted unix sockets must be
# reachable by that uid (or its group: `--group-add`), or use tcp:/ssl: remotes.
# HEALTHCHECK asks the daemon itself over its control socket (`ovn-appctl ... status`).
# Images with a HEALTHCHECK must be built in docker format (`buildah bud --format=docker`).
#
# Build secret `cacert` (optional): a CA bundle pip trusts while it downloads the Python
# dependencies (a TLS-intercepting proxy); it is mounted for that one step, never stored.

ARG DEBIAN=debian:12-slim

FROM ${DEBIAN} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-openvswitch \
 && rm -rf /var/lib/apt/lists/*
# The venv is where it runs (/opt/ovn-northd-py/.venv, as the README's install); the source stays here.
WORKDIR /src
# Dependencies first (their layer survives changes to the code), pinned by docker/constraints.txt.
# System site-packages: python-ovs from python3-openvswitch, which has the C JSON parser.
COPY docker/constraints.txt ./docker/constraints.txt
RUN --mount=type=secret,id=cacert \
    if [ -s /run/secrets/cacert ]; then export PIP_CERT=/run/secrets/cacert; fi \
 && python3 -m venv --system-site-packages /opt/ovn-northd-py/.venv \
 && /opt/ovn-northd-py/.venv/bin/pip install --no-cache-dir --disable-pip-version-check --no-compile \
      -r docker/constraints.txt -c docker/constraints.txt
COPY pyproject.toml ./
COPY ovn_northd_py ./ovn_northd_py
# The project itself (no dependencies left to fetch), then pip and setuptools out of the venv.
RUN --mount=type=secret,id=cacert \
    if [ -s /run/secrets/cacert ]; then export PIP_CERT=/run/secrets/cacert; fi \
 && cd /opt/ovn-northd-py \
 && .venv/bin/pip install --no-cache-dir --disable-pip-version-check --no-deps /src \
 && .venv/bin/pip check \
 && .venv/bin/pip uninstall --yes --quiet pip setuptools \
 && .venv/bin/python -m compileall -q .venv/lib \
 && .venv/bin/python -c "import ovn_northd_py.cli, ovs._json, numpy, uvloop, structlog, prometheus_client"

FROM ${DEBIAN}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-openvswitch ovn-common \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 -K SYS_GID_MAX=10001 ovn-northd \
 && useradd --system --uid 10001 --gid 10001 -K SYS_UID_MAX=10001 --home-dir /nonexistent \
      --shell /usr/sbin/nologin ovn-northd \
 && install -d -o ovn-northd -g ovn-northd -m 0750 /run/ovn-northd-py
COPY --from=build /opt/ovn-northd-py/.venv /opt/ovn-northd-py/.venv
ENV OVN_NB_DB=unix:/var/run/ovn/ovnnb_db.sock \
    OVN_SB_DB=unix:/var/run/ovn/ovnsb_db.sock \
    OVN_NORTHD_METRICS_ADDRESS=127.0.0.1:9476 \
    OVN_RUNDIR=/run/ovn-northd-py
USER 10001:10001
EXPOSE 9476
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["ovn-appctl", "-T", "3", "-t", "/run/ovn-northd-py/ovn-northd.ctl", "status"]
ENTRYPOINT ["/opt/ovn-northd-py/.venv/bin/ovn-northd-py", "--unixctl=/run/ovn-northd-py/ovn-northd.ctl", \
            "--log-format=json", "-vconsole:info"]
