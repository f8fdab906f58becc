import traceback, torch, torch.cuda
orig = torch.cuda._lazy_init
seen = []
def traced():
    if not seen:
        seen.append(1)
        print("FIRST torch CUDA init in pid", __import__("os").getpid(), "\n" + "".join(traceback.format_stack(limit=25)), flush=True)
    return orig()
torch.cuda._lazy_init = traced
import pytest
pytest.main(["-p", "interop.pytest_plugin", "--backend=cuda", "-q", "-p", "no:cacheprovider", "--tb=line",
             "tests/test_operators.py", "-k", "ReLU_rank_2"])
