"""The scale-in handler: sets the idle VL endpoint's instance count to zero on its alarm."""
