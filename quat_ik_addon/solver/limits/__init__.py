"""Joint limits: what a bone may do, and everything that needs to know a limit's shape.

``joints`` holds the limits themselves (free, fixed, hinge, ball with reach windows and a twist
range) behind the ``JointLimit`` protocol; ``reach_windows`` and the ``window_*`` modules the
windows a ball joint's direction passes through; ``chain_clamp`` and ``contacts`` a chain's
limits applied and pressed on in a few numpy calls; ``channel_locks`` locked rotation channels
as limits; ``fitting``, ``presets``, ``mirroring`` and ``retarget`` limits learned, shipped,
mirrored and moved between rest frames; ``overlay_geometry`` the shapes the viewport draws for
them. Only modules here look at a limit's class; everything else asks the protocol.
"""
