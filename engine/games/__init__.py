"""Layer 6, games: whole games. The game and series people play, with their save files
(game), step-by-step play input for the browser (steps), and the duplicate-dice money
harnesses that measure strength: kernel players inside numba (duplicate) and searching
players in a Python loop (duplicate_search). May import every layer below."""
