"""Host port conflicts (service.engine.ports), scheduler HostPortInfo semantics."""

from __future__ import annotations

import pytest

from service.engine.objects import Container, ContainerPort, Pod
from service.engine.ports import HostPorts, wanted_host_ports


def _pod(*ports, name="p", init_ports=(), sidecar=True):
    restart = "Always" if sidecar else None
    return Pod(
        namespace="ns",
        name=name,
        containers=(Container(name="c", ports=tuple(ports)),),
        init_containers=(Container(name="i", ports=tuple(init_ports), restart_policy=restart),),
    )


def _port(host_port, protocol="TCP", host_ip=""):
    return ContainerPort(container_port=80, host_port=host_port, protocol=protocol, host_ip=host_ip)


CASES = [
    pytest.param(_port(80), [_port(80)], True, id="same port"),
    pytest.param(_port(80), [_port(81)], False, id="other port"),
    pytest.param(_port(80, "UDP"), [_port(80)], False, id="other protocol"),
    pytest.param(_port(80, ""), [_port(80, "TCP")], True, id="empty protocol is TCP"),
    pytest.param(_port(0), [_port(0)], False, id="host port 0 ignored"),
    pytest.param(_port(80, host_ip="10.0.0.1"), [_port(80)], True, id="ip vs wildcard"),
    pytest.param(_port(80), [_port(80, host_ip="10.0.0.1")], True, id="wildcard vs ip"),
    pytest.param(
        _port(80, host_ip="10.0.0.1"), [_port(80, host_ip="10.0.0.2")], False, id="two ips"
    ),
    pytest.param(
        _port(80, host_ip="0.0.0.0"), [_port(80, host_ip="10.0.0.2")], True, id="explicit wildcard"
    ),
]


@pytest.mark.parametrize(("want", "used", "conflict"), CASES)
def test_host_ports_fit(want, used, conflict):
    others = [_pod(p, name=f"o{i}") for i, p in enumerate(used)]
    assert HostPorts.of_pods(others).fits(_pod(want)) is not conflict


def test_sidecar_ports_count_and_other_init_containers_do_not():
    """scheduler-oracle.json "sidecar-host-ports-*": the real scheduler counts the host ports
    of restartable init containers, for the incoming pod and for the pods on the node."""
    sidecar = _pod(init_ports=(_port(80),))
    other = _pod(_port(80), name="o")
    assert wanted_host_ports(sidecar) == [_port(80)]
    assert not HostPorts.of_pods([other]).fits(sidecar)
    assert not HostPorts.of_pods([_pod(init_ports=(_port(80),), name="o")]).fits(_pod(_port(80)))
    plain_init = _pod(init_ports=(_port(80),), sidecar=False)
    assert wanted_host_ports(plain_init) == []
    assert HostPorts.of_pods([other]).fits(plain_init)
    assert HostPorts.of_pods([_pod(init_ports=(_port(80),), name="o", sidecar=False)]).fits(
        _pod(_port(80))
    )


def test_copy_is_independent():
    used = HostPorts.of_pods([_pod(_port(80), name="o")])
    copy = used.copy()
    copy.add("", "TCP", 81)
    assert copy.conflicts("", "TCP", 80) and copy.conflicts("", "TCP", 81)
    assert not used.conflicts("", "TCP", 81)
