// SPDX-License-Identifier: MIT
// Public chains carry Multicall3 at 0xcA11bde05977b3631167028862bE2a173976CA11; x402's EVM facilitator
// calls its `tryAggregate` there to tell why a payment would fail (nonce already used, balance too low,
// wrong EIP-712 name). A fresh local chain has nothing at that address, so the devnet places this
// contract's runtime code there (devnet/chain.ts). Only the function the facilitator calls.
pragma solidity 0.8.37;

contract Multicall {
    struct Call {
        address target;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) external returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory returnData) = calls[i].target.call(calls[i].callData);
            require(success || !requireSuccess, "call failed");
            results[i] = Result(success, returnData);
        }
    }
}
