"""Pure analysis over evidence: fact diffs, finding rules. No queries here."""
