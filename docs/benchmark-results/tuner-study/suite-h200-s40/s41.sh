# session 40: 135544b's kernel prelude on NVIDIA (device tests), then the remaining four at --runs 5 (s40.sh)
mkdir -p /tmp/so; P=/tmp/so/progress
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl3/*.whl
echo "tests-start $(date +%s)" >> $P
PYTHONPATH=/tmp/pkg:/tmp/site timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_kernel_scalars.py tests/test_versions_agree.py > /tmp/so/pytest.log 2>&1
echo "rc $?" >> /tmp/so/pytest.log
echo "tests $(date +%s)" >> $P
bash .devdata/s40.sh
