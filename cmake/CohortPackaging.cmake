# packaging later
