# Job environment detection (cohortrun, OpenMPI, PMIx, Slurm, torchrun-style
# variables) and joining the job's store. Paths are relative to transport/.
list(APPEND sources jobenv/job_env.cc jobenv/slurm_lists.cc jobenv/job_store.cc)
