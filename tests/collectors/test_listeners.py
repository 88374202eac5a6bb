"""Which process serves a port, from real `ss -ltnpH` / `ss -tnpH` output."""

from collectors.listeners import (
    SEPARATOR,
    capture_filter,
    sampling_argv,
    service_process,
    split_output,
)

OUTPUT = f"""LISTEN 0      128    127.0.0.1:25672 0.0.0.0:* users:(("beam.smp",pid=2980,fd=17))
LISTEN 0      128      0.0.0.0:2024  0.0.0.0:*
LISTEN 0 511 0.0.0.0:8080 0.0.0.0:* users:(("java",pid=4100,fd=9),("java",pid=4100,fd=10))
LISTEN 0      511         [::]:8443     [::]:* users:(("java",pid=4100,fd=11))
LISTEN 0      128      0.0.0.0:22    0.0.0.0:* users:(("sshd",pid=800,fd=3))
{SEPARATOR}
ESTAB 0      0      10.0.0.5:8080  10.0.0.9:50000 users:(("java",pid=4100,fd=40))
ESTAB 0      0      10.0.0.5:41000 10.0.0.7:5432  users:(("java",pid=4100,fd=41))
ESTAB 0      0      10.0.0.5:41002 10.0.0.7:5432  users:(("java",pid=4100,fd=42))
ESTAB 0      0      [fe80::1%eth0]:41004 [fe80::2]:6379  users:(("java",pid=4100,fd=43))
ESTAB 0      0      10.0.0.5:22    10.0.0.1:61000 users:(("sshd",pid=900,fd=4))
ESTAB 0      0      127.0.0.1:5432  127.0.0.1:60764 users:(("postgres",pid=9756,fd=7))
"""


def test_the_process_on_the_port_with_its_ports_and_dependencies():
    listening, established = split_output(OUTPUT)
    found = service_process(listening, established, port=8080, ssh_port=22)
    assert (found.name, found.pid) == ("java", 4100)
    assert found.ports == (8080, 8443)
    assert found.dependencies == (("10.0.0.7", 5432), ("fe80::2", 6379))


def test_a_process_is_found_by_its_name_too():
    listening, established = split_output(OUTPUT)
    assert service_process(listening, established, name="beam.smp").pid == 2980
    assert service_process(listening, established, name="nginx") is None


def test_nothing_on_the_port_is_none():
    listening, established = split_output(OUTPUT)
    assert service_process(listening, established, port=9999) is None
    # Listening, but ss shows no process (another user's): none either.
    assert service_process(listening, established, port=2024) is None


def test_the_filter_holds_the_services_traffic_and_never_the_ssh_session():
    listening, established = split_output(OUTPUT)
    found = service_process(listening, established, port=8080, ssh_port=22)
    assert capture_filter(found, ssh_port=22) == (
        "(tcp port 8080 or tcp port 8443 or (host 10.0.0.7 and tcp port 5432) or "
        "(host fe80::2 and tcp port 6379)) and not tcp port 22"
    )


def test_readings_taken_one_after_another_give_every_connection_any_of_them_saw():
    """sampling_argv's output: the listening sockets once, then the connections read again
    and again; a connection opened for one request is in one reading only."""
    listening = 'LISTEN 0 128 127.0.0.1:8080 0.0.0.0:* users:(("python3",pid=77,fd=3))\n'
    kept = 'ESTAB 0 0 127.0.0.1:40000 127.0.0.1:5432 users:(("python3",pid=77,fd=5))\n'
    once = 'ESTAB 0 0 127.0.0.1:40002 127.0.0.1:8443 users:(("python3",pid=77,fd=6))\n'
    other = 'ESTAB 0 0 127.0.0.1:40004 127.0.0.1:6379 users:(("redis-cli",pid=90,fd=3))\n'
    text = f"{listening}{SEPARATOR}\n{kept}{kept}{once}{other}{kept}"

    found = service_process(*split_output(text), port=8080, ssh_port=22)

    assert found.dependencies == (("127.0.0.1", 5432), ("127.0.0.1", 8443))
    argv = sampling_argv(3, 0.02)
    assert argv[:2] == ["sh", "-c"] and len(argv) == 3
    assert argv[2] == (
        f"ss -ltnpH && echo {SEPARATOR} && for n in 0 1 2; do ss -tnpH; sleep 0.02; done"
    )
