"""Layer 4, cube: the doubling cube and match play. The one cube state type (state), the
Kazaross XG2 match equity table with gammon values and the Crawford rule (met), and the
conversion of the five cubeless probabilities into cubeful equities and a cube decision
by Janowski's model with a cube efficiency by position class (equity). The cubeful
search over the dice lives in doublet.search.cubeful, which imports this layer. May
import core, rules, formats and nn."""
