"""The wording matcher: finds where withdrawn claims are still asserted."""
