"""The form of packet captures imported from files."""

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from investigations.forms.ladder_imports import MultipleFileField
from investigations.services.captures import MAX_IMPORT_BYTES, MAX_IMPORT_FILES


def _import_help() -> str:
    return gettext(
        "pcap or pcapng, as tcpdump -w or Wireshark save them: up to %(count)s files of up "
        "to %(size)s GB each."
    ) % {"count": MAX_IMPORT_FILES, "size": MAX_IMPORT_BYTES // 1024**3}


class CaptureImportForm(forms.Form):
    """pcap or pcapng files made elsewhere (tcpdump -w, Wireshark, a cloud's packet mirror);
    the service refuses what is no capture, by its first bytes, before anything is kept."""

    prefix = "capture"

    side = forms.ChoiceField(choices=[("a", "A"), ("b", "B")], label=_("Side"))
    file = MultipleFileField(label=_("Capture files"), help_text=lazy(_import_help, str)())
