"""Every SPEC §10 term off is today's month bit for bit, for every preset: the
fingerprints below were taken from the package before §10 existed, and a preset
given its §10 sections with every term off (failure rate 0, no spot card) gives
them too; a preset with §10 terms on gives them with its terms turned off."""

import hashlib

import numpy as np
import pytest

import mc
from conftest import OUTAGES_OFF as OFF
from conftest import one_fast

# Months 0..11 of each preset, seed 5: sha256 of every output column, by name.
BEFORE = {
    "golden-idler": "641adbe98563695e", "noise-evictor": "4ce7238a307aa038",
    "bargain-shortfall": "6ae265b1c025b622", "golden-idler-steady": "27796fc5aa6daeda",
    "noise-evictor-day": "e90ae1830f7ba9b3", "bargain-flagship": "da004aa1e84f5b27",
    "lemon-hunter": "8e7edc8437478cd1", "dip-chaser": "d7e507457a4a113c", "steady-hand": "1ba59e087d99a2b6",
    "lemon-hunter-field": "863704f3de678eb1",
    # Its §10 terms turned off (conftest.OUTAGES_OFF): lemon-hunter-field with its wander and swing at 0,
    # fingerprinted at the commit before §10 (d73185b^).
    "spot-field": "f844e021f51ebef0",
    # SPEC §11's services on replicas: recorded when they were added.
    "llama70b-tp4": "67d6420eec206a76",
    "llama405b-tp8": "b99aa64891698e80",
}


def fingerprint(sc: mc.Scenario) -> str:
    r = mc.simulate(sc, 12, seed=5, chunk=12, keep_samples=True)
    h = hashlib.sha256()
    for c in sorted(r.samples.columns):
        h.update(c.encode())
        h.update(np.ascontiguousarray(r.samples[c].to_numpy()).tobytes())
    return h.hexdigest()[:16]


def test_every_preset_has_a_fingerprint():
    assert set(BEFORE) == set(mc.presets.names())


@pytest.mark.parametrize("name", one_fast(BEFORE, keep="golden-idler"))
def test_terms_off_are_todays_bits(name):
    sc = mc.presets.get(name)
    assert (sc.outages is None) == (name not in OFF)
    sc = sc.replace(OFF.get(name, {}))
    assert sc.outages is None
    assert fingerprint(sc) == BEFORE[name]
    if name == "golden-idler":  # the fast tier's case: one compile
        return
    off = sc.replace({"failures.rate": 0.0, "failures.replace_hours": 5.0})
    if sc.autoscaler is not None:
        off = off.replace({"autoscaler.failover": False})
    assert off.outages is None and fingerprint(off) == BEFORE[name]
