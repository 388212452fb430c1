"""The solve methods: quaternion CCD (``ccd``, Blow 2002), damped least squares on the
Jacobian (``dls``), the rotation that best aligns vector pairs (``alignment``), and the short
ladder that runs them (``ladder``: CCD, DLS, and one then the other)."""
