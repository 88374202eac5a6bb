"""Every write goes through a function here, named <entity>_<action>, keyword-only."""
