"""Layer 5, search: decisions. The expectiminimax over the dice with its move filters,
pruning and cache (searcher), the one chooser, ranking and depth policy every caller
uses (choice), cube decisions and cubeful play values by search (cubeful), rollouts
with luck adjustment (rollout), and the analysis documents the front ends print
(analysis, rollout_analysis). May import core, rules, formats, nn
and cube."""
