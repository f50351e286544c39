import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # rank_pool, checks (also for spawned ranks)

from rank_pool import RankPool  # noqa: E402


@pytest.fixture(scope="module", params=[2, 4], ids=lambda n: f"{n}ranks")
def pool(request):
    p = RankPool(request.param)
    yield p
    p.close()
