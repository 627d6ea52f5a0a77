"""MuJoCo mechanics shared by the environments: model checks, drives, slew, collision projection."""
