"""Building the course (authors only): executing notebooks (:mod:`.execute`) and making exercises (:mod:`.exercises`)."""
