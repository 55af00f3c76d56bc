# ovn-northd-py beside ovsdb-server: a container running the daemon against NB/SB remotes.
#   docker build -t ovn-northd-py .
#   docker run --rm -v /var/run/ovn:/var/run/ovn -p 9476:9476 ovn-northd-py \
#       --ovnnb-db=unix:/var/run/ovn/ovnnb_db.sock --ovnsb-db=unix:/var/run/ovn/ovnsb_db.sock
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-openvswitch ovn-common openvswitch-common \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/ovn-northd-py
COPY pyproject.toml README.md ./
COPY ovn_northd_py ./ovn_northd_py
# System site-packages: python-ovs from python3-openvswitch, which has the C JSON parser.
RUN python3 -m venv --system-site-packages .venv && .venv/bin/pip install --no-cache-dir .
EXPOSE 9476
ENTRYPOINT ["/opt/ovn-northd-py/.venv/bin/ovn-northd-py", "--log-format=json", "--metrics-address=0.0.0.0:9476"]
