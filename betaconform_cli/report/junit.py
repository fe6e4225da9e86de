"""JUnit XML from a result's verdicts (report.Verdict): one <testcase> per dataset and gate, a <failure> whose
message is the gate's reason. The shape CI systems read (Jenkins' junit.xsd, GitHub and GitLab test reports):
<testsuites> around one <testsuite> per command run, every count and time given."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from datetime import datetime, timezone
from xml.etree import ElementTree as ET

from ..escape import xml as _x
from . import Verdict


def to_junit(command: str, found: Sequence[Verdict], now: datetime | None = None) -> str:
    """The XML document for one run of `command`."""
    failures = sum(not v.passed for v in found)
    stamp = (now or datetime.now(timezone.utc)).replace(microsecond=0).isoformat()
    suites = ET.Element("testsuites", name="betaconform", tests=str(len(found)), failures=str(failures), errors="0", time="0")
    suite = ET.SubElement(suites, "testsuite", name=f"betaconform {_x(command)}", tests=str(len(found)),
                          failures=str(failures), errors="0", skipped="0", time="0", timestamp=stamp,
                          hostname=_x(socket.gethostname() or "localhost"))
    for v in found:
        name = f"{v.dataset}: {v.gate}" if v.gate else v.dataset
        case = ET.SubElement(suite, "testcase", name=_x(name), classname=_x(f"betaconform.{command}"), time="0")
        if not v.passed:
            kind = "input" if v.gate == "input" else "gate" if v.gate else "failure"  # input: not analysed (report/failed.py)
            failure = ET.SubElement(case, "failure", message=_x(v.reason or "failed"), type=kind)
            failure.text = _x(v.reason or "failed", keep_newlines=True)
        elif v.reason:
            ET.SubElement(case, "system-out").text = _x(v.reason, keep_newlines=True)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
