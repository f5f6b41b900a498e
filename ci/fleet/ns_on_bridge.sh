# Sourced by the fleet's cluster tests (ci/fleet/slurm_cluster.sh, tests/fleet/podman_fleet.sh).
# ns_on_bridge NS VETH BRIDGE ADDRESS/LEN: a network namespace NS cabled to BRIDGE, as a host to
# its switch: a veth whose end VETH is BRIDGE's port and whose other end is NS's eth0, with
# ADDRESS; eth0 and lo up.
ns_on_bridge() {
  ip netns add "$1"
  ip link add "$2" type veth peer name eth0 netns "$1"
  ip link set "$2" master "$3" up
  ip -n "$1" addr add "$4" dev eth0
  ip -n "$1" link set eth0 up
  ip -n "$1" link set lo up
}
