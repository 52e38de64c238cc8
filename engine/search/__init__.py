"""Layer 4, search: decisions. The expectiminimax over the dice with its move filters,
pruning and cache (searcher), the one chooser, ranking and depth policy every caller
uses (choice), and the analysis documents the front ends print (analysis). May import
core, rules, formats and nn."""
