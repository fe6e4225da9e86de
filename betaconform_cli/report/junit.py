"""JUnit XML from a result's verdicts (report.Verdict): one <testcase> per dataset and gate, a <failure> whose
message is the gate's reason. The shape CI systems read (Jenkins' junit.xsd, GitHub and GitLab test reports):
<testsuites> around one <testsuite> per command run, every count and time given."""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from datetime import datetime, timezone
from xml.etree import ElementTree as ET

from . import Verdict

# characters XML 1.0 cannot carry at all (escaping does not help): dropped as \xNN text instead
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _x(text: str) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", str(text))


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
            failure = ET.SubElement(case, "failure", message=_x(v.reason or "failed"), type="gate" if v.gate else "failure")
            failure.text = _x(v.reason or "failed")
        elif v.reason:
            ET.SubElement(case, "system-out").text = _x(v.reason)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
