"""The checklist's progress bar, which the checklist panel and the page's header draw."""


def progress_bar(settled: int, total: int) -> dict:
    """What _checklist_progress.html reads: items settled, all items, the percentage."""
    return {
        "settled": settled,
        "total": total,
        "percent": round(100 * settled / total) if total else 0,
    }
