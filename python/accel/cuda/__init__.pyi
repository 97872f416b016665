from .._backend_api import *  # noqa: F401,F403
from . import random as random
