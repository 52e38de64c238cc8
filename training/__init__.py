"""Self-play TD(lambda) training of Doublet's nets (torch); exports engine models.

Dependencies run one way: training imports engine, engine never imports training.
"""
