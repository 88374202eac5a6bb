"""The knowledge base of root causes (the installation's entries, read by everyone, and each
team's own), the revisions of its entries, and what a case says of its own: its confirmed root
causes with their evidence, its postmortem and its action items."""

from django.conf import settings
from django.db import models
from django.utils.translation import get_language

from investigations.choices import RootCauseCategory

# The texts of an entry, each written in English and in Chinese (`<field>_zh`).
BILINGUAL = ("title", "symptoms", "detection", "fix", "verification", "monitoring")


class RootCause(models.Model):
    """What made one side slower, how it shows, how to find it, fix it, verify the fix and
    catch it next time. An entry belongs to the installation (`team` empty: the entries that
    ship with Perfcase, read by everyone, edited by operators holding `change_rootcause`) or
    to one team (read by its members, edited by its leads)."""

    slug = models.SlugField(max_length=80, unique=True)
    category = models.CharField(max_length=20, choices=RootCauseCategory.choices)
    title = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200, blank=True)
    symptoms = models.TextField(blank=True)
    symptoms_zh = models.TextField(blank=True)
    detection = models.TextField(blank=True)
    detection_zh = models.TextField(blank=True)
    fix = models.TextField(blank=True)
    fix_zh = models.TextField(blank=True)
    verification = models.TextField(blank=True)
    verification_zh = models.TextField(blank=True)
    monitoring = models.TextField(blank=True)
    monitoring_zh = models.TextField(blank=True)
    references = models.JSONField(default=list, blank=True)
    # How to recognise it from the evidence: [{"source", ..., "weight", "direction"}], see
    # analysis/signals.py; the hypotheses of a case are ranked by them.
    signals = models.JSONField(default=list, blank=True)
    # The owner: a team, or none for the installation's entries. PROTECT, not SET_NULL: a
    # team's private entry must never turn into one every team reads.
    team = models.ForeignKey(
        "Team", on_delete=models.PROTECT, null=True, blank=True, related_name="root_causes"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["category", "title"]

    def __str__(self) -> str:
        return self.title

    def text(self, field: str) -> str:
        """A text in the reader's language: the Chinese one for Chinese readers where it is
        written, else the English one."""
        if (get_language() or "").startswith("zh") and getattr(self, f"{field}_zh", ""):
            return getattr(self, f"{field}_zh")
        return getattr(self, field)

    @property
    def local_title(self) -> str:
        return self.text("title")

    @property
    def owner(self) -> str:
        return "team" if self.team_id else "installation"


class RootCauseRevision(models.Model):
    """One edit of an entry: who made it, when, and the text of each field it changed, before
    and after. Written by the service in the edit's transaction; never changed afterwards."""

    root_cause = models.ForeignKey(RootCause, on_delete=models.CASCADE, related_name="revisions")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The author's name then, kept when the account is gone.
    author_name = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField()
    # {field: text} of the changed fields only (references as a list of texts).
    previous = models.JSONField(default=dict)
    current = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The entry's history, newest first (root_cause_history).
            models.Index(fields=["root_cause", "-created_at"], name="rootcauserevision_entry"),
        ]

    def __str__(self) -> str:
        return f"{self.root_cause_id} by {self.author_name} at {self.created_at:%Y-%m-%d %H:%M}"


class CaseRootCause(models.Model):
    """A root cause confirmed on an investigation, with what proves it and the fix applied."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="case_root_causes"
    )
    root_cause = models.ForeignKey(RootCause, on_delete=models.PROTECT, related_name="cases")
    # [{"kind": EvidenceKind, "id": n}]: findings, profiles, captures, ladders, timeline entries.
    evidence = models.JSONField(default=list, blank=True)
    fix = models.TextField(blank=True)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    confirmed_at = models.DateTimeField()

    class Meta:
        ordering = ["confirmed_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["investigation", "root_cause"],
                name="%(app_label)s_%(class)s_once_per_case",
                violation_error_message="This root cause is already confirmed on the case.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.investigation_id}: {self.root_cause}"


class Postmortem(models.Model):
    """The write-up of a case, where people write; the rest of it (times, timeline, root
    causes, findings, ladders) is read from the case as it is."""

    investigation = models.OneToOneField(
        "Investigation", on_delete=models.CASCADE, related_name="postmortem"
    )
    summary = models.TextField(blank=True)
    impact = models.TextField(blank=True)
    fix = models.TextField(blank=True)
    verification = models.TextField(blank=True)
    lessons = models.TextField(blank=True)
    # The timeline entries chosen for the write-up (ids, in the timeline's order).
    events = models.JSONField(default=list, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Postmortem of {self.investigation_id}"

    @property
    def written(self) -> bool:
        """Written up: a summary and the lessons or the fix."""
        return bool(self.summary.strip() and (self.lessons.strip() or self.fix.strip()))


class ActionItem(models.Model):
    """Something to do after the case ("add an alert on the CPU governor"): an owner, a due
    date, done or not."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="action_items"
    )
    title = models.TextField()
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    due = models.DateField(null=True, blank=True)
    done = models.BooleanField(default=False)
    done_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["done", "due", "id"]

    def __str__(self) -> str:
        return self.title[:80]


class SearchDocument(models.Model):
    """One searchable thing (a root cause, an investigation) and its length in terms: the
    search index lives in plain tables, the same on SQLite and PostgreSQL."""

    kind = models.CharField(max_length=20)
    object_id = models.PositiveBigIntegerField()
    length = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "object_id"], name="%(app_label)s_%(class)s_one_per_object"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id}"


class SearchTerm(models.Model):
    """A term of a document and how often it occurs there (weighted by where: a title's
    terms count more), from investigations/analysis/search_terms.py."""

    document = models.ForeignKey(SearchDocument, on_delete=models.CASCADE, related_name="terms")
    term = models.CharField(max_length=64)
    weight = models.FloatField()

    class Meta:
        indexes = [models.Index(fields=["term"], name="searchterm_term")]

    def __str__(self) -> str:
        return f"{self.term} ({self.weight:g})"
