"""The harness of the fault matrices, tests/ha/fault_matrix.py (three instances behind HAProxy)
and tests/faults/fault_matrix.py (one instance), and of tests/bench/soak.py: the topology of
servers on 127.0.0.x (topology), the browser-like load (load), the phases that inject a fault
under load and compare the counts (faults, single_faults), and the results table (report).

Each script's folder links here (tests/ha/harness -> ../harness, likewise tests/faults and
tests/bench), so `python3 tests/ha/fault_matrix.py` imports `harness.topology` with no change to
sys.path. Python 3's standard library only.
"""
