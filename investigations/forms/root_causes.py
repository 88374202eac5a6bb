"""The form that confirms a root cause on a case: an entry of the knowledge base or a new
one, the evidence that proves it, and the fix applied."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations import limits
from investigations.choices import RootCauseCategory
from investigations.models import RootCause


class CaseRootCauseForm(forms.Form):
    prefix = "cause"

    root_cause = forms.ModelChoiceField(
        queryset=RootCause.objects.none(),
        required=False,
        label=_("From the knowledge base"),
        empty_label=_("— or write a new one below —"),
    )
    new_title = forms.CharField(
        required=False,
        max_length=limits.TITLE,
        label=_("New root cause"),
        help_text=_("A short name, in English; the knowledge base keeps it for the next case."),
    )
    new_title_zh = forms.CharField(
        required=False, max_length=limits.TITLE, label=_("Its Chinese name")
    )
    new_category = forms.ChoiceField(
        required=False, choices=RootCauseCategory.choices, label=_("Category")
    )
    evidence = forms.MultipleChoiceField(
        required=False,
        label=_("The evidence that proves it"),
        widget=forms.CheckboxSelectMultiple,
    )
    fix = forms.CharField(
        required=False,
        label=_("The fix applied"),
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": limits.ENTRY}),
    )

    def __init__(
        self, *args, offered: dict | None = None, entries=None, writes: bool = False, **kwargs
    ):
        super().__init__(*args, **kwargs)
        # The entries the case may name (the installation's and its team's own), and whether
        # the user may write a new one for its team (its leads).
        if entries is not None:
            self.fields["root_cause"].queryset = entries
        self.writes = writes
        if not writes:
            self.fields["root_cause"].empty_label = _("— choose one —")
        # The evidence of this case, by kind ({kind: [EvidenceItem]}): "kind:id" values.
        self.offered = offered or {}
        self.fields["evidence"].choices = [
            (item.key, item.label) for items in self.offered.values() for item in items
        ]
        self.fields["root_cause"].label_from_instance = lambda entry: entry.local_title

    def clean(self):
        data = super().clean()
        if not data.get("root_cause") and not (data.get("new_title") or "").strip():
            self.add_error(
                "root_cause", _("Choose a root cause from the knowledge base, or write a new one.")
            )
        if (data.get("new_title") or "").strip() and not self.writes:
            self.add_error(
                "new_title",
                _("Only the leads of this team may write a new root cause: choose one above."),
            )
        elif data.get("root_cause") and (data.get("new_title") or "").strip():
            self.add_error(
                "new_title", _("Choose one from the knowledge base or write a new one, not both.")
            )
        return data

    def evidence_items(self) -> list[dict]:
        chosen = []
        for value in self.cleaned_data.get("evidence") or []:
            kind, _, pk = value.partition(":")
            chosen.append({"kind": kind, "id": int(pk)})
        return chosen
