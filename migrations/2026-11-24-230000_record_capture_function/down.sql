DROP FUNCTION burrow_record_capture(
    integer, uuid[], varchar[], varchar[], varchar[], timestamptz[], varchar[], jsonb[],
    uuid[], varchar[], jsonb[], bool[], integer, text[], jsonb[], uuid[], varchar[], bool[], bool[]
);
