"""Memory's life after it is written (SPEC 6): summarising conversation turns, and more to come."""
