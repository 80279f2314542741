"""Fixtures for the integration tests (the machinery lives in harness.py).

  broker_config  module-scoped dict of extra config keys ({"socket.request.max.bytes": 1048576});
                 override it in a test module to configure that module's broker.
  broker         module-scoped running harness.Broker, one per test module, stopped at
                 teardown with SIGTERM and a check that it exited 0.
  bootstrap      "127.0.0.1:<port>" of the module's broker.
"""

import pytest

from harness import Broker, run_client  # noqa: F401  (run_client re-exported for tests)


# -- fixtures -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def broker_config():
    """Extra config keys for the module's broker; override in a test module."""
    return {}


@pytest.fixture(scope="module")
def broker(broker_config):
    b = Broker(config=broker_config)
    b.start()
    yield b
    try:
        if b.proc is not None:
            rc = b.proc.poll()
            if rc is not None:
                b.proc = None
                pytest.fail("mskmock died during the module with status %d\n%s"
                            % (rc, b.log_tail()))
            b.stop(check=True)
    finally:
        b.cleanup()


@pytest.fixture(scope="module")
def bootstrap(broker):
    return broker.bootstrap
