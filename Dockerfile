# ovn-northd-py in a container, beside NB/SB ovsdb-servers reachable through sockets or TCP/TLS.
#
#   docker build -t ovn-northd-py .
#   docker run --rm -v /var/run/ovn:/var/run/ovn \
#       -e OVN_NB_DB=unix:/var/run/ovn/ovnnb_db.sock -e OVN_SB_DB=unix:/var/run/ovn/ovnsb_db.sock \
#       -e OVN_NORTHD_METRICS_ADDRESS=0.0.0.0:9476 -p 127.0.0.1:9476:9476 ovn-northd-py
#
# Configuration: OVN_NB_DB, OVN_SB_DB (remotes, comma-separated for a cluster), and
# OVN_NORTHD_METRICS_ADDRESS (default 127.0.0.1:9476, i.e. inside the container only) from the
# environment; any ovn-northd option as arguments (e.g. -p/-c/-C for ssl: remotes, -vfile:dbg).
# It runs as the unprivileged user ovn-northd (uid 10001): the mounted unix sockets must be
# reachable by that uid (or its group: `--group-add`), or use tcp:/ssl: remotes.
# HEALTHCHECK asks the daemon itself over its control socket (`ovn-appctl ... status`).

ARG DEBIAN=debian:12-slim

FROM ${DEBIAN} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-openvswitch \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/ovn-northd-py
COPY pyproject.toml README.md ./
COPY docker/constraints.txt ./docker/constraints.txt
COPY ovn_northd_py ./ovn_northd_py
# System site-packages: python-ovs from python3-openvswitch, which has the C JSON parser.
RUN python3 -m venv --system-site-packages .venv \
 && .venv/bin/pip install --no-cache-dir --disable-pip-version-check -c docker/constraints.txt . \
 && .venv/bin/python -c "import ovn_northd_py.cli, numpy, uvloop, structlog, prometheus_client"

FROM ${DEBIAN}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-openvswitch ovn-common \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /nonexistent --shell /usr/sbin/nologin ovn-northd \
 && install -d -o ovn-northd -g ovn-northd -m 0750 /run/ovn-northd-py
COPY --from=build /opt/ovn-northd-py /opt/ovn-northd-py
ENV OVN_NB_DB=unix:/var/run/ovn/ovnnb_db.sock \
    OVN_SB_DB=unix:/var/run/ovn/ovnsb_db.sock \
    OVN_NORTHD_METRICS_ADDRESS=127.0.0.1:9476 \
    OVN_RUNDIR=/run/ovn-northd-py
USER ovn-northd
EXPOSE 9476
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["ovn-appctl", "-T", "3", "-t", "/run/ovn-northd-py/ovn-northd.ctl", "status"]
ENTRYPOINT ["/opt/ovn-northd-py/.venv/bin/ovn-northd-py", "--unixctl=/run/ovn-northd-py/ovn-northd.ctl", \
            "--log-format=json", "-vconsole:info"]
