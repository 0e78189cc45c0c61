"""Drives a Redfish service with OpenStack's sushy (Debian's python3-sushy), the library Ironic uses.

Usage: /usr/bin/python3 sushy-drive.py URL USERNAME PASSWORD AUTH IMAGE
  AUTH: session (sushy's SessionAuth) | basic (BasicAuth) | either (its default SessionOrBasicAuth)

Prints one JSON object per line, one per step, each with what sushy read back afterwards. The
service is found the way sushy finds it: the system collection's single member, the manager's
virtual media with a CD media type; no path is given to it but the service root.
"""
import json
import sys
import time

import sushy
from sushy import auth as sushy_auth


def out(step, **kw):
    print(json.dumps({"step": step, **kw}), flush=True)


def wait_for(fn, want, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        value = fn()
        if value == want:
            return value
        time.sleep(0.1)
    return fn()


def main():
    url, username, password, mode, image = sys.argv[1:6]
    auth = {
        "session": sushy_auth.SessionAuth,
        "basic": sushy_auth.BasicAuth,
        "either": sushy_auth.SessionOrBasicAuth,
    }[mode](username=username, password=password)
    root = sushy.Sushy(url + "/redfish/v1", auth=auth)
    out("connect", auth=type(auth).__name__, session=bool(getattr(auth, "get_session_key", lambda: None)()))

    system = root.get_system()
    out("system", path=system.path, identity=system.identity, power=system.power_state.value,
        resets=sorted(v.value for v in system.get_allowed_reset_system_values()))

    system.reset_system(sushy.ResetType.FORCE_OFF)
    out("power_off", power=wait_for(lambda: (system.refresh(), system.power_state.value)[1], "Off"))

    manager = root.get_manager()
    cds = [m for m in manager.virtual_media.get_members() if sushy.VirtualMediaType.CD in m.media_types]
    media = cds[0]
    media.eject_media()
    media.refresh()
    out("eject", media=media.identity, inserted=bool(media.inserted), image=media.image)

    media.insert_media(image)
    inserted = wait_for(lambda: (media.refresh(), bool(media.inserted))[1], True)
    out("insert", media=media.identity, inserted=inserted, image=media.image)

    system.set_system_boot_options(target=sushy.BootSource.CD, enabled=sushy.BootSourceOverrideEnabled.ONCE)
    system.refresh()
    out("boot_override", enabled=system.boot.enabled.value, target=system.boot.target.value)

    system.reset_system(sushy.ResetType.ON)
    out("power_on", power=wait_for(lambda: (system.refresh(), system.power_state.value)[1], "On"))

    media.eject_media()
    media.refresh()
    out("eject_again", inserted=bool(media.inserted), image=media.image)


if __name__ == "__main__":
    try:
        main()
    except sushy.exceptions.SushyError as e:
        out("error", kind=type(e).__name__, message=str(e))
        sys.exit(2)
