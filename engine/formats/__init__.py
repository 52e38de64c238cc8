"""Layer 2, formats: text and people at the edge. gnubg Position IDs, XGIDs and JSON
boards (ids), play notation written and parsed as GNU Backgammon does (notation), and
Position, the frozen wrapper for people (position). May import core and rules."""
